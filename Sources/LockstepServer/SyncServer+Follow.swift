import LockstepTransport

/// `GET /rooms/ROOM/log?after=V&follow=true`: a recording that stays open, with each later change as one more line once
/// it is as durable as an ack (when the room releases it: changes through other servers of a cluster included), until
/// the server drains or the client goes away. A follower keeps the room in memory as a connected client does.
extension SyncServer {
    /// The answer to a follower whose recording is `recording`: the recording, then every patch the room releases.
    func follow(_ room: Room, after recording: RecordingStream, format: RecordingFormat) -> HTTPResponse {
        guard !isDraining else {
            return HTTPResponse(status: 503, text: Self.drainingNotice + "\n")
        }
        // Dropped or written out while its history was read: the room in memory now is another one.
        guard rooms[room.name] === room else {
            return HTTPResponse(status: 503, text: "the room was reloaded while it was read; follow it again\n")
        }
        let follower = RoomFollower(
            room: room, recording: recording, format: format, queueLimit: configuration.queueLimitBytes)
        follower.onEnd = { follower in self.followerEnded(follower) }
        room.followers.append(follower)
        room.idleSince = nil
        let body = HTTPBodyStream(openEnded: true, released: { follower.released() }) { follower.next() }
        follower.body = body
        recording.body = body
        follower.keepAliveTask = Task { [clock] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: RoomFollower.keepAliveInterval) } catch { return }
                guard self.keepAlive(follower) else { return }
            }
        }
        // Proxies (nginx) pass each line on as it comes rather than buffer the response.
        let headers = ["Cache-Control": "no-cache", "X-Accel-Buffering": "no"]
        return HTTPResponse(status: 200, contentType: format.contentType, headers: headers, stream: body)
    }

    /// A keep-alive tick of `follower`; false once it is done. A follower whose client left before its answer was
    /// written, or whose room was dropped (to be read again), ends here.
    private func keepAlive(_ follower: RoomFollower) -> Bool {
        guard !isStopped, follower.phase == .following else { return false }
        guard rooms[follower.room.name] === follower.room, follower.body != nil else {
            follower.cut()
            return false
        }
        follower.keepAlive()
        return true
    }

    /// `follower` is done: its room forgets it, and may leave memory once nobody uses it.
    private func followerEnded(_ follower: RoomFollower) {
        let room = follower.room
        room.followers.removeAll { $0 === follower }
        if room.isIdle { roomBecameIdle(room) }
    }

    /// The server drains: every follower gets what is queued for it, then the last chunk of its response.
    func finishFollowers() {
        for room in rooms.values {
            for follower in room.followers { follower.finish() }
        }
    }

    /// Some follower's response is still being written.
    var hasFollowers: Bool { rooms.values.contains { !$0.followers.isEmpty } }
}

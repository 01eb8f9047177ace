import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Timers (1.3): an action with `after` is applied later by the server, as its sender, even with nobody connected.
/// A room's engine schedules, cancels and fires them in its turns (``RoomEngine``); the server arms the one wait for
/// the soonest, reads the rooms due timers need, and reads timers from storage.
///
/// A timer is stored with its room, in the same write as the changes around it, and removed in the write that stores
/// its change, so it fires once across a crash; on several servers each arms what the database holds and the room's
/// lock lets exactly one of them apply it. The server keeps only a timer's room, name and due time in its
/// ``TimerSchedule``, not its room: rooms load when a timer fires and leave memory again when idle.
extension SyncServer {
    /// Reads the timers storage holds (at start; on several servers also every ``CommitPipeline/timerPoll``, for
    /// those other servers scheduled) and arms the next.
    func loadTimers() async {
        let horizon = pipeline.timerPoll.map { clock.epochMilliseconds + Int($0 / .milliseconds(1)) } ?? .max
        guard let stored = await pipeline.pendingTimers(dueBy: horizon, server: self) else { return }
        perform(timers.load(stored))
    }

    /// Reads the room's timers from storage again after a write of the room failed (its timers scheduled, fired or
    /// cancelled may not be stored): until then none of them fires, and the read is tried again every second while
    /// storage cannot be read.
    func rereadTimers(of room: String) {
        let (read, wait) = timers.forget(room: room)
        perform(wait)
        Task {
            while !self.isStopped {
                if let stored = await self.pipeline.pendingTimers(in: room, server: self) {
                    return self.perform(self.timers.reread(room, read: read, stored: stored))
                }
                try? await self.clock.sleep(for: .seconds(1))
            }
        }
    }

    /// Starts the poll of a pipeline other servers write timers to.
    func pollTimers() {
        guard let interval = pipeline.timerPoll else { return }
        Task {
            while !self.isStopped {
                try? await self.clock.sleep(for: interval)
                await self.loadTimers()
            }
        }
    }

    /// Carries out what `timers` decided for the wait: sleeps until the soonest timer comes due on the injected
    /// clock (its deadline taken now), then hands what is due to the rooms.
    func perform(_ wait: TimerSchedule.Wait) {
        guard wait != .keep else { return }
        timerWait?.cancel()
        timerWait = nil
        guard case .arm(let due) = wait else { return }
        let deadline = clock.now + .milliseconds(due - clock.epochMilliseconds)
        timerWait = Task {
            try? await self.clock.sleep(until: deadline)
            guard !Task.isCancelled, !self.isStopped else { return }
            self.timerWait = nil
            self.fireDue()
        }
    }

    /// Hands every due timer to its room, in due order; a room not in memory is read first.
    private func fireDue() {
        let (deliveries, wait) = timers.waitEnded(now: clock.epochMilliseconds) { rooms[$0] != nil }
        for delivery in deliveries {
            switch delivery {
            case .fire(let timer):
                guard let room = rooms[timer.room] else { continue }
                pipeline.submit(.timer(timer), to: room, server: self)
                roomBecameIdle(room)
            case .readRoom(let name):
                Task { await self.fireAwaiting(in: name) }
            }
        }
        perform(wait)
    }

    /// Reads a room that timers came due in, then hands them to it in order.
    private func fireAwaiting(in name: String) async {
        let read = await room(named: name, creating: true)
        guard case .success(let room?) = read else {
            // Storage is away: the timers wait in the book and fire on the next try.
            _ = timers.roomRead(name, found: false)
            try? await clock.sleep(for: .seconds(1))
            return perform(timers.rearm())
        }
        for timer in timers.roomRead(name, found: true) { pipeline.submit(.timer(timer), to: room, server: self) }
        roomBecameIdle(room)
    }

    /// `GET /rooms/ROOM/timers`: the room's pending timers, soonest first (without their actions on a server with
    /// private parts); `404` for a room no one has used (nor scheduled a timer in), as its other reads.
    func timersResponse(room name: String) async -> HTTPResponse {
        var notFound: HTTPResponse?
        switch await roomToRead(name) {
        case .found: break
        case .answered(let answer) where answer.status == 404: notFound = answer
        case .answered(let answer): return answer
        }
        let listed: [StoredTimer]
        if pipeline.timerPoll == nil {
            listed = timers.book.pending(in: name)
        } else {
            guard let stored = await pipeline.pendingTimers(in: name, server: self) else {
                let reason = RequestAnswer.unavailable
                return HTTPResponse(status: 503, text: "the room's timers cannot be read: \(reason)\n")
            }
            listed = stored
        }
        if let notFound, listed.isEmpty { return notFound }
        let entries = listed.compactMap { timer in
            TimerRecord(timer.request)?.listing(of: timer, withAction: privateParts.isEmpty)
        }
        let body: JSON = ["room": .string(name), "timers": .array(entries)]
        return HTTPResponse(status: 200, contentType: "application/json", body: body.serialized())
    }
}

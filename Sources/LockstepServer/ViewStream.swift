import LockstepTransport

/// The broadcast stream of one view of a room (`?path=`, or the whole room with private parts), and its clients:
/// delivers each change as ``RoomViews`` projected it, once for all of them.
///
/// With private parts, the readers of a view share its stream: it carries each change as someone who owns none of
/// what the change wrote sees it (``RoomView/reader`` nil), and a reader who sees it otherwise (an owner of what it
/// wrote) gets its own form in place of that frame. A public change is then encoded and appended once, however many
/// readers follow the view.
///
/// Loop-bound: touched only by ``SyncServer`` on the transport's thread.
final class ViewStream {
    let view: RoomView
    let stream: BroadcastStream
    /// Clients of readers other than the view's own: they get their own frames in place of the stream's.
    private var readers: [String: [Session]] = [:]

    init(view: RoomView, stream: BroadcastStream) {
        self.view = view
        self.stream = stream
    }

    func admit(_ session: Session) {
        guard let reader = session.sight.reader, reader != view.reader else { return }
        readers[reader, default: []].append(session)
    }

    func dismiss(_ session: Session) {
        guard let reader = session.sight.reader, var sessions = readers[reader] else { return }
        sessions.removeAll { $0 === session }
        readers[reader] = sessions.isEmpty ? nil : sessions
    }

    /// Puts a released change on the stream, and each reader's own form in its place for that reader's clients.
    func release(_ frames: RoomViews.Frames) {
        let mark = frames.shared.map { stream.append($0) }
        for (reader, own) in frames.own {
            for session in readers[reader] ?? [] where session.connection.follows(stream) {
                if let mark {
                    session.connection.substitute(own, for: mark, in: stream)
                } else if let own {
                    session.connection.send(own)
                }
            }
        }
    }

    /// How many clients a change reaches, and the bytes queued for them.
    func deliveries(of frames: RoomViews.Frames) -> (count: Int, bytes: Int) {
        let sharedBytes = frames.shared?.byteCount
        var count = sharedBytes == nil ? 0 : stream.followerCount
        var bytes = count * (sharedBytes ?? 0)
        for (reader, own) in frames.own {
            let clients = readers[reader]?.count ?? 0
            if let sharedBytes {
                count -= clients
                bytes -= clients * sharedBytes
            }
            if let own {
                count += clients
                bytes += clients * own.byteCount
            }
        }
        return (max(0, count), max(0, bytes))
    }
}

@available(*, unavailable)
extension ViewStream: Sendable {}

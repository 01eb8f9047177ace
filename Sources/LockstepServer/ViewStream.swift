import DequeModule
import LockstepCore
import LockstepJSON
import LockstepTransport

/// The broadcast stream of one view of a room (`?path=`, or the whole room with private parts): the patches that
/// touch it, projected once for all its clients, and the recent ones kept for clients resuming that view.
///
/// With private parts, the readers of a view share its stream: it carries each change as someone who owns none of
/// what the change wrote sees it (``RoomView/reader`` nil), and a reader who sees it otherwise (an owner of what it
/// wrote) gets its own form in place of that frame. A public change is then encoded and appended once, however many
/// readers follow the view.
///
/// Loop-bound: touched only by ``SyncServer`` on the transport's thread.
final class ViewStream {
    /// One change as the view's clients see it: the stream's frame (nil: the stream's reader does not see it), and
    /// the readers who see it otherwise, each with its own frame (nil: nothing).
    struct Frames {
        var shared: OutboundFrame?
        var own: [String: OutboundFrame?] = [:]

        /// What `reader`'s clients get; nil when nothing.
        func frame(for reader: String?) -> OutboundFrame? {
            if let reader, let own = own[reader] { return own }
            return shared
        }
    }

    let view: RoomView
    let stream: BroadcastStream
    /// The view's patches after ``startVersion``, newest last, at most the room's resume window.
    private(set) var log: Deque<(version: Int, frames: Frames)> = []
    /// The room's version when the view was opened: it has every patch that touched it after that.
    let startVersion: Int
    /// The view's value as its own reader has it.
    var value: ViewValue
    /// Readers other than the view's own, with their clients, and the room's version from which the stream holds
    /// their own frames.
    private(set) var readers: [String: (since: Int, sessions: [Session])] = [:]
    /// Clients following the view, of every reader.
    private(set) var sessionCount = 0
    private let resumeWindow: Int

    init(view: RoomView, stream: BroadcastStream, startVersion: Int, value: ViewValue, resumeWindow: Int) {
        self.view = view
        self.stream = stream
        self.startVersion = startVersion
        self.value = value
        self.resumeWindow = resumeWindow
    }

    /// Adds a client; its reader gets its own frames for changes after `version` (the room's, stored or not).
    func admit(_ session: Session, version: Int) {
        sessionCount += 1
        guard let reader = session.sight.reader, reader != view.reader else { return }
        readers[reader, default: (version, [])].sessions.append(session)
    }

    func dismiss(_ session: Session) {
        sessionCount -= 1
        guard let reader = session.sight.reader, var entry = readers[reader] else { return }
        entry.sessions.removeAll { $0 === session }
        readers[reader] = entry.sessions.isEmpty ? nil : entry
    }

    /// Whether `reader` has a client here.
    func hasClients(of reader: String) -> Bool {
        reader == view.reader ? sessionCount > 0 : readers[reader] != nil
    }

    /// Puts a released change on the stream, and each reader's own form in its place for that reader's clients.
    func release(_ frames: Frames, version: Int) {
        log.append((version, frames))
        if log.count > resumeWindow { log.removeFirst() }
        let mark = frames.shared.map { stream.append($0) }
        for (reader, own) in frames.own {
            for session in readers[reader]?.sessions ?? [] where session.connection.follows(stream) {
                if let mark {
                    session.connection.substitute(own, for: mark, in: stream)
                } else if let own {
                    session.connection.send(own)
                }
            }
        }
    }

    /// How many clients a change reaches, and the bytes queued for them.
    func deliveries(of frames: Frames) -> (count: Int, bytes: Int) {
        let sharedBytes = frames.shared?.byteCount
        var count = sharedBytes == nil ? 0 : stream.followerCount
        var bytes = count * (sharedBytes ?? 0)
        for (reader, own) in frames.own {
            let clients = readers[reader]?.sessions.count ?? 0
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

    /// The view's patches after `version` up to `released`, as `reader` sees them, if it still has all of them.
    func patches(after version: Int, released: Int, reader: String?) -> [OutboundFrame]? {
        guard version >= 0, version <= released else { return nil }
        if let reader, reader != view.reader, (readers[reader]?.since ?? .max) > version { return nil }
        let oldest = log.count == resumeWindow ? (log.first?.version ?? startVersion) - 1 : startVersion
        guard version >= oldest else { return nil }
        return log.filter { $0.version > version }.compactMap { $0.frames.frame(for: reader) }
    }
}

@available(*, unavailable)
extension ViewStream: Sendable {}

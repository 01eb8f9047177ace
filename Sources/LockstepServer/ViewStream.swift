import DequeModule
import LockstepCore
import LockstepJSON
import LockstepTransport

/// The broadcast stream of one view of a room (`?path=`): the patches that touch it, projected once for all its
/// clients, and the recent ones kept for clients resuming that view.
///
/// Loop-bound: touched only by ``SyncServer`` on the transport's thread.
final class ViewStream {
    let view: RoomView
    let stream: BroadcastStream
    /// The view's patches after ``startVersion``, newest last, at most the room's resume window.
    private(set) var log: Deque<(version: Int, frame: OutboundFrame)> = []
    /// The room's version when the view was opened: it has every patch that touched it after that.
    let startVersion: Int
    /// The view's value as its clients have it.
    var value: ViewValue
    private let resumeWindow: Int

    init(view: RoomView, stream: BroadcastStream, startVersion: Int, value: ViewValue, resumeWindow: Int) {
        self.view = view
        self.stream = stream
        self.startVersion = startVersion
        self.value = value
        self.resumeWindow = resumeWindow
    }

    func release(_ frame: OutboundFrame, version: Int) {
        log.append((version, frame))
        if log.count > resumeWindow { log.removeFirst() }
        stream.append(frame)
    }

    /// The view's patches after `version` up to `released`, if it still has all of them.
    func patches(after version: Int, released: Int) -> [OutboundFrame]? {
        guard version >= 0, version <= released else { return nil }
        let oldest = log.count == resumeWindow ? (log.first?.version ?? startVersion) - 1 : startVersion
        guard version >= oldest else { return nil }
        return log.filter { $0.version > version }.map(\.frame)
    }
}

@available(*, unavailable)
extension ViewStream: Sendable {}

import DequeModule
import LockstepCore
import LockstepJSON
import LockstepTransport

/// The broadcast stream of one view of a room (`?path=`): the patches that touch it, projected once for all its
/// clients, and the recent ones kept for clients resuming that view.
///
/// Loop-bound: touched only by ``SyncServer`` on the transport's thread.
final class ViewStream {
    let view: PathView
    let stream: BroadcastStream
    /// The view's patches after ``startVersion``, newest last, at most the room's resume window.
    private(set) var log: Deque<(version: Int, frame: OutboundFrame)> = []
    /// The room's version when the view was opened: it has every patch that touched it after that.
    let startVersion: Int
    /// The view's value as of the latest change projected: a change that replaces it by an equal value is not
    /// sent. Kept by applying the view's own operations, so a change costs its operations here too.
    private(set) var value: JSON
    private let resumeWindow: Int

    init(view: PathView, stream: BroadcastStream, startVersion: Int, value: JSON, resumeWindow: Int) {
        self.view = view
        self.stream = stream
        self.startVersion = startVersion
        self.value = value
        self.resumeWindow = resumeWindow
    }

    /// The operations the view's clients get for a change projected as `projection`; nil when it leaves the view's
    /// value as it was.
    func accept(_ projection: PathView.Projection, after state: () throws -> JSON) -> JSONPatch? {
        switch projection {
        case .replaced(let next):
            guard next != value else { return nil }
            value = next
            return projection.operations
        case .patched(let patch):
            do {
                try patch.apply(to: &value)
                return patch
            } catch {
                // Operations that do not apply to the view alone (a move from outside it): its whole value.
                return accept(.replaced(view.value(in: (try? state()) ?? .null)), after: state)
            }
        }
    }

    /// The room's state was taken back (a write that failed): the view's value is read again from `state`.
    func reset(to state: JSON) {
        value = view.value(in: state)
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

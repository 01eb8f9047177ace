import LockstepCore
import LockstepJSON
import LockstepTransport

/// A view's clients follow the view's stream (``ViewStream``), shared by every reader of a part that is not itself
/// private, and see what they may of snapshots, resumes, causes and recordings.
extension RoomView: RoomSight {
    func snapshotState(of room: Room) throws(StoreError) -> [UInt8] {
        value(in: try room.engine.store.stateJSON(), parts: room.privateParts).serialized()
    }

    func open(in room: Room, make: () -> BroadcastStream) {
        _ = room.stream(of: self, make: make)
    }

    func stream(in room: Room) -> BroadcastStream {
        room.openStream(of: self)?.stream ?? room.stream
    }

    func admit(_ session: Session, to room: Room) {
        room.admit(session, to: self)
    }

    func dismiss(_ session: Session, from room: Room) {
        room.dismiss(session, from: self)
    }

    /// From its stream's own patches while it has them, else from the room's resume window, as long as the stream
    /// then brings this reader every change not yet released.
    func missedPatches(
        after version: Int, released: ReleasedPatches, current: Int, views: RoomViews, state: (Int) throws -> JSON
    ) -> [OutboundFrame]? {
        if let own = views.patches(after: version, released: released.version, seenThrough: self) { return own }
        guard views.carries(self, after: released.version, current: current) else { return nil }
        return released.patches(after: version).flatMap {
            Room.patches($0, seenThrough: self, parts: views.parts, state: state)
        }
    }

    /// Without the action of a change that wrote what the reader may not see.
    func cause(of patch: Room.LoggedPatch) -> Cause {
        var cause = patch.cause
        if redacts, !patch.touched.isVisible(to: reader) { cause.action = nil }
        return cause
    }

    /// Projected through the view when private parts apply; a view of a room without them gets every line.
    func lines(from state: JSON, parts: PrivateParts) -> any RecordingLines {
        redacts ? RecordingView(view: self, state: state, parts: parts) : WholeRoom()
    }
}

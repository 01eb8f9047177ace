import LockstepCore
import LockstepJSON
import LockstepTransport

/// The sight of a reader who sees all of a room: its clients follow the room's own stream, share its snapshot bytes,
/// and get every line and cause as written.
struct WholeRoom: RoomSight, RecordingLines {
    var reader: String? { nil }

    func value(in state: JSON, parts: PrivateParts) -> JSON { state }

    func snapshotState(of room: Room) throws(StoreError) -> [UInt8] {
        try room.stateBytes()
    }

    func open(in room: Room, make: () -> BroadcastStream) {}

    func stream(in room: Room) -> BroadcastStream { room.stream }

    func admit(_ session: Session, to room: Room) {}

    func dismiss(_ session: Session, from room: Room) {}

    func missedPatches(
        after version: Int, released: ReleasedPatches, current: Int, views: RoomViews, state: (Int) throws -> JSON
    ) -> [OutboundFrame]? {
        released.patches(after: version)?.map(\.frame)
    }

    func cause(of patch: Room.LoggedPatch) -> Cause { patch.cause }

    func lines(from state: JSON, parts: PrivateParts) -> any RecordingLines { self }

    func append(_ line: [UInt8], version: Int, as format: RecordingFormat, to bytes: inout [UInt8]) {
        format.append(line, version: version, to: &bytes)
    }

    func append(_ frame: OutboundFrame, version: Int, as format: RecordingFormat, to bytes: inout [UInt8]) {
        frame.withPayload { format.append($0, version: version, to: &bytes) }
    }
}

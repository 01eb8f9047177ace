import LockstepCore
import LockstepJSON
import LockstepTransport

/// What one reader of a room sees, chosen once from its `path=` and the room's private parts: the whole room
/// (``WholeRoom``), or a part of it as that reader may see it (``RoomView``). Everything that differs between the two
/// (the stream a client follows, its snapshot, its resume, the causes it is shown, a recording's lines) is asked of
/// this type.
protocol RoomSight {
    /// Whose private parts it sees; nil for the whole room, or for a token without a subject.
    var reader: String? { get }
    /// What it sees of the room's whole `state`.
    func value(in state: JSON, parts: PrivateParts) -> JSON
    /// The state of a snapshot of `room` now, serialized.
    func snapshotState(of room: Room) throws(StoreError) -> [UInt8]
    /// Opens what a client of this sight follows in `room`, before its snapshot or resume.
    func open(in room: Room, make: () -> BroadcastStream)
    /// The stream a client of this sight follows in `room`.
    func stream(in room: Room) -> BroadcastStream
    /// A client of this sight joined `room`.
    func admit(_ session: Session, to room: Room)
    /// A client of this sight left `room`.
    func dismiss(_ session: Session, from room: Room)
    /// What a client resuming after `version` missed, as it sees a room that `released` the patches of its resume
    /// window, is at version `current` (ahead of them while changes are being stored), and whose `views` are open;
    /// nil when the room no longer has all of it. `state(V)` is the room's whole state at version `V`.
    func missedPatches(
        after version: Int, released: ReleasedPatches, current: Int, views: RoomViews, state: (Int) throws -> JSON
    ) -> [OutboundFrame]?
    /// `patch`'s cause as shown to this reader.
    func cause(of patch: Room.LoggedPatch) -> Cause
    /// A recording's lines as this reader gets them, from the room's whole `state` at the recording's first version.
    func lines(from state: JSON, parts: PrivateParts) -> any RecordingLines
}

/// The sight of a reader following `path` with the subject `reader`: the whole room when that is the root and no
/// private parts apply (`redacting` false), else a view.
func roomSight(following path: JSONPointer, reader: String?, redacting: Bool) -> any RoomSight {
    path.isRoot && !redacting ? WholeRoom() : RoomView(path: PathView(path: path), reader: reader, redacts: redacting)
}

/// What an HTTP reader sees: the part `path` names (the whole room without one), and with private parts, what the
/// subject of its Bearer token may see.
func roomSight(of request: HTTPRequest, path: String?, parts: PrivateParts, tokens: TokenAuthority?) -> any RoomSight {
    let pointer = path.flatMap { try? JSONPointer($0) } ?? .root
    guard !parts.isEmpty else { return roomSight(following: pointer, reader: nil, redacting: false) }
    let token = TokenAuthority.bearerToken(in: request.header("authorization"))
    let subject = token.flatMap { try? tokens?.verify($0) }?.subject
    return roomSight(following: pointer, reader: subject, redacting: true)
}

/// The refusal of a `path=` (a view's) that is not a JSON Pointer; nil for one that is.
func pathRefusal(_ path: String) -> HTTPResponse? {
    do {
        _ = try JSONPointer(path)
        return nil
    } catch {
        return HTTPResponse(status: 400, text: "path must be a JSON Pointer such as /boards/7: \(error)\n")
    }
}

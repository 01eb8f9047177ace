import LockstepCore
import LockstepJSON

/// A recording as one reader would have received it (private parts of the room): each patch line projected
/// through the reader's view, from the room's whole state at each version, and left out where the reader got none.
///
/// Loop-bound: used by one ``RecordingStream``.
final class RecordingView: RecordingLines {
    private var document: JSON
    private var value: ViewValue
    private let parts: PrivateParts

    /// Starts at `state`, the room's whole state at the recording's first version.
    init(view: RoomView, state: JSON, parts: PrivateParts) {
        document = state
        value = ViewValue(view: view, state: state, parts: parts)
        self.parts = parts
    }

    /// The line this reader gets for a patch line of the room, or nil for none.
    func project(_ line: [UInt8]) -> [UInt8]? {
        guard let json = try? JSON(parsing: line),
            case .patch(let version, let ops, var cause, let undo, let redo)? = try? ServerMessage(json: json),
            (try? ops.apply(to: &document)) != nil
        else { return nil }
        let after = document
        guard let projected = value.accept(ops, parts: parts, after: { after }) else { return nil }
        if !parts.touched(by: ops, action: cause.action).isVisible(to: value.view.reader) { cause.action = nil }
        return ServerMessage.patch(version: version, ops: projected, cause: cause, undo: undo, redo: redo).serialized()
    }

    func append(_ line: [UInt8], version: Int, as format: RecordingFormat, to bytes: inout [UInt8]) {
        guard let projected = project(line) else { return }
        format.append(projected, version: version, to: &bytes)
    }
}

@available(*, unavailable)
extension RecordingView: Sendable {}

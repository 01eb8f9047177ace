/// Why a store did not apply a request; each case maps to one wire error code.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The action is not one of the app's actions (it did not decode).
    case invalidAction(String)
    /// The app's reducer refused the action under a domain rule.
    case rejected(String)
    /// Undo with nothing left to undo.
    case nothingToUndo
    /// Redo with nothing left to redo.
    case nothingToRedo
    /// Undo mine or redo mine cannot take the change back on top of what changed since.
    case conflict(String)
    /// The sender may not write there: someone else's private part of the room.
    case forbidden(String)
    /// The app's state could not be encoded or rebuilt: a bug in its `Codable` conformance.
    case brokenState(String)

    /// The protocol's error code.
    public var code: String {
        switch self {
        case .invalidAction: "invalid_action"
        case .rejected, .brokenState: "rejected"
        case .nothingToUndo: "nothing_to_undo"
        case .nothingToRedo: "nothing_to_redo"
        case .conflict: "conflict"
        case .forbidden: "forbidden"
        }
    }

    /// Words for the client.
    public var message: String {
        switch self {
        case .invalidAction(let reason): "not an action of this app: \(reason)"
        case .rejected(let reason): reason
        case .nothingToUndo: "there is nothing to undo"
        case .nothingToRedo: "there is nothing to redo"
        case .conflict(let reason): "cannot take the change back: \(reason)"
        case .forbidden(let reason): reason
        case .brokenState(let reason): "the app's state cannot be encoded: \(reason)"
        }
    }

    public var description: String { "\(code): \(message)" }
}

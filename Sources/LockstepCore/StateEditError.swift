/// Why a migration's edit of a stored state did not fit that state.
public enum StateEditError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A member was set, renamed or removed on a value that is not an object.
    case notAnObject(key: String)
    /// `modifyEach` was given a pointer to a value that is neither an array nor an object.
    case notAContainer(pointer: String)
    /// The pointer does not lead to a value in the state.
    case missing(pointer: String)

    public var description: String {
        switch self {
        case .notAnObject(let key): "cannot edit the member \"\(key)\" of a value that is not an object"
        case .notAContainer(let pointer): "the value at \(pointer) is neither an array nor an object"
        case .missing(let pointer): "the state has no value at \(pointer)"
        }
    }
}

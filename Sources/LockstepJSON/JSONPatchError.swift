/// Why a patch could not be read or applied; names the failing operation so a client can report it.
public struct JSONPatchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong; also thrown on its own by the internal engine before the operation is known.
    public enum Reason: Error, Sendable, Hashable {
        /// Nothing exists at the pointer (a `remove`/`replace`/`test` target, a `from`, or a parent on the way).
        case pathNotFound(JSONPointer)
        /// The pointer goes through a value that is neither an object nor an array.
        case notAContainer(JSONPointer)
        /// A token used on an array is not `0`, a number without leading zeros, or (for `add`) `-`.
        case invalidArrayIndex(token: String, at: JSONPointer)
        /// An array index past the end (for `add`, past `count`).
        case indexOutOfRange(index: Int, count: Int, at: JSONPointer)
        /// A `test` operation found a different value. Its description names neither: a room's value never reaches
        /// the words of an error, which may go to a client that must not see it.
        case testFailed(expected: JSON, actual: JSON)
        /// A `move` whose destination lies inside the value being moved.
        case moveIntoOwnChild(from: JSONPointer, path: JSONPointer)
        /// `remove` of the whole document, which would leave nothing.
        case cannotRemoveRoot
        /// The patch itself is not a JSON array.
        case patchNotAnArray
        /// An operation is not a JSON object.
        case operationNotAnObject
        /// An operation lacks a required member (`op`, `path`, `from` or `value`).
        case missingMember(String)
        /// A member has the wrong type, e.g. a numeric `path`.
        case memberNotAString(String)
        /// `op` is not one of the six RFC 6902 operations.
        case unknownOperation(String)
        /// `path` or `from` is not a valid JSON Pointer.
        case invalidPointer(member: String, JSONPointerError)
    }

    /// Position of the failing operation in the patch, when it is known.
    public var operationIndex: Int?
    /// The failing operation's `op` name, when it is known.
    public var operationName: String?
    /// The failing operation's `path`, when it is known.
    public var path: JSONPointer?
    /// What went wrong.
    public var reason: Reason

    /// Describes a failure, optionally locating it in the patch.
    public init(operationIndex: Int? = nil, operationName: String? = nil, path: JSONPointer? = nil, reason: Reason) {
        self.operationIndex = operationIndex
        self.operationName = operationName
        self.path = path
        self.reason = reason
    }

    /// A sentence such as `operation 2 (remove "/todos/9"): nothing at /todos/9`.
    public var description: String {
        var prefix = "JSON Patch failed"
        if let operationIndex {
            prefix += " at operation \(operationIndex)"
            if let operationName {
                prefix += " (\(operationName)"
                if let path { prefix += " \"\(path)\"" }
                prefix += ")"
            }
        }
        return prefix + ": " + reasonText
    }

    private var reasonText: String {
        switch reason {
        case .pathNotFound(let pointer): return "nothing exists at \"\(pointer)\""
        case .notAContainer(let pointer): return "\"\(pointer)\" is neither an object nor an array"
        case let .invalidArrayIndex(token, pointer):
            return "\"\(token)\" is not a valid index into the array at \"\(pointer)\""
        case let .indexOutOfRange(index, count, pointer):
            return "index \(index) is out of range for the array at \"\(pointer)\" with \(count) elements"
        case .testFailed: return "the value there is not the one the test expected"
        case let .moveIntoOwnChild(from, path): return "cannot move \"\(from)\" into its own child \"\(path)\""
        case .cannotRemoveRoot: return "the whole document cannot be removed; use replace"
        case .patchNotAnArray: return "a patch must be a JSON array of operations"
        case .operationNotAnObject: return "an operation must be a JSON object"
        case .missingMember(let name): return "the operation has no \"\(name)\" member"
        case .memberNotAString(let name): return "the \"\(name)\" member must be a string"
        case .unknownOperation(let name):
            return "\"\(name)\" is not an operation (use add, remove, replace, move, copy or test)"
        case let .invalidPointer(member, error): return "\"\(member)\": \(error)"
        }
    }
}

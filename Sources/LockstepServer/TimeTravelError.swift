import LockstepCore
import LockstepStorage

/// Why a past version of a room cannot be produced; each case maps to one wire error code.
enum TimeTravelError: Error, CustomStringConvertible {
    /// The room had `version` once, but neither memory nor the log can rebuild it any more: `unknown_version`.
    case unknownVersion(Int, oldest: Int)
    /// A version the room never had (negative or ahead of it): `bad_message`.
    case neverHad(Int, current: Int)
    /// A stored patch does not apply or the state does not encode: a damaged log or a broken app.
    case broken(String)

    var code: String {
        switch self {
        case .unknownVersion: "unknown_version"
        case .neverHad: "bad_message"
        case .broken: "rejected"
        }
    }

    var message: String {
        switch self {
        case .unknownVersion(let version, let oldest):
            "version \(version) can no longer be rebuilt; the oldest this server can rebuild is \(oldest)"
        case .neverHad(let version, let current):
            "the room never had version \(version); its current version is \(current)"
        case .broken(let reason):
            "the past state cannot be rebuilt: \(reason)"
        }
    }

    var description: String { "\(code): \(message)" }
}

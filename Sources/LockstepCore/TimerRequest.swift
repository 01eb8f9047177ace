import LockstepJSON

/// An action's `after` and `timer`: apply it later, by the server, under a name unique in the room.
public struct TimerRequest: Sendable, Equatable {
    /// The longest delay: 7 days, in milliseconds.
    public static let maxAfter = 604_800_000
    /// Timer names: 1 to 64 characters of `[A-Za-z0-9._-]`.
    public static let maxNameLength = 64

    /// The delay in milliseconds.
    public var after: Int
    /// The timer's name; nil lets the server pick one.
    public var name: String?

    /// A delay of `after` milliseconds, named `name`.
    public init(after: Int, name: String? = nil) {
        self.after = after
        self.name = name
    }

    /// Whether `name` is a valid timer name.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = name.utf8
        return (1...maxNameLength).contains(bytes.count)
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default:
                    false
                }
            }
    }

    /// The `timer` field of a message: absent, or a valid name.
    static func name(in object: JSONObject) throws(WireError) -> String? {
        switch object["timer"] {
        case nil, .null?:
            return nil
        case .string(let name)? where isValidName(name):
            return name
        default:
            throw .badMessage("\"timer\" must be 1 to \(maxNameLength) characters of A-Z a-z 0-9 . _ -")
        }
    }

    /// The `after` and `timer` of a request; nil when it has no `after`. Only an action can be scheduled.
    static func read(from json: JSON, for message: ClientMessage) throws(WireError) -> TimerRequest? {
        guard case .object(let object) = json else { return nil }
        switch object["after"] {
        case nil, .null?:
            if case .action = message, object["timer"] != nil, object["timer"] != .null {
                throw .badMessage("\"timer\" names a scheduled action: give \"after\" too")
            }
            return nil
        case let value?:
            guard case .action = message else { throw .badMessage("only an action can be scheduled with \"after\"") }
            guard let after = value.intValue, (0...maxAfter).contains(after) else {
                throw .badMessage("\"after\" must be an integer from 0 to \(maxAfter) (milliseconds)")
            }
            return TimerRequest(after: after, name: try name(in: object))
        }
    }
}

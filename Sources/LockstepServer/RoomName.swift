/// A room's name as the URL gives it: 1 to 128 characters of `[A-Za-z0-9._-]`, other than `.` and `..`, which a URL
/// path takes for steps (libwebsockets resolves `/rooms/..` to `/`), so no client could reach such a room.
struct RoomName {
    static let maxLength = 128
    /// Every room's WebSocket and HTTP path starts with this.
    static let pathPrefix = "/rooms/"
    /// The rule, in words, for a client whose room name breaks it.
    static let rule =
        "a room name is 1 to \(maxLength) characters of A-Z, a-z, 0-9, '.', '_' and '-', not '.' or '..'"
    let value: String

    /// Reads the room from a WebSocket or HTTP path `/rooms/NAME`.
    init?(path: String) {
        guard path.hasPrefix(Self.pathPrefix) else { return nil }
        self.init(String(path.dropFirst(Self.pathPrefix.count)))
    }

    init?(_ name: String) {
        let bytes = name.utf8
        guard (1...Self.maxLength).contains(bytes.count), bytes.allSatisfy(Self.isAllowed), name != ".", name != ".."
        else { return nil }
        value = name
    }

    /// Whether `byte` may appear in a name: `[A-Za-z0-9._-]`, for rooms and sessions alike.
    static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}

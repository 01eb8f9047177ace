/// A client's session name, from the handshake's `session=` query parameter: 1 to 64 characters of
/// `[A-Za-z0-9._-]`. The client picks it (a random id) and keeps it across reconnections, so the server can
/// tell a request it already applied from a new one.
struct SessionName: Hashable {
    static let maxLength = 64
    let value: String

    init?(_ text: String) {
        let bytes = text.utf8
        guard (1...Self.maxLength).contains(bytes.count), bytes.allSatisfy(RoomName.isAllowed) else { return nil }
        value = text
    }

    /// Why a handshake's query must be refused with HTTP 400, or nil when its `session` is absent or valid.
    static func refusal(query: [String: String]) -> String? {
        guard let text = query["session"], SessionName(text) == nil else { return nil }
        return "session must be 1 to \(maxLength) characters of A-Z a-z 0-9 . _ -\n"
    }
}

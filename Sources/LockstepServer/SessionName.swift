/// A client's session name, from the handshake's `session=` query parameter: 1 to 64 characters of
/// `[A-Za-z0-9._-]`. The client picks it (a random id) and keeps it across reconnections, so the server can
/// tell a request it already applied from a new one.
///
/// With tokens, a session belongs to its subject: `value`, the key its marks and its changes are kept under, is the
/// pair of the name and the token's `sub`, so the same name under another subject is another session.
struct SessionName: Hashable {
    static let maxLength = 64
    /// The name as the client gave it.
    let given: String
    /// The key of the session's marks and authorship: `given` without tokens, `given@sub` with them (`given@` for a
    /// token without `sub`). A name has no `@`, so no two pairs share a key.
    let value: String

    init?(_ text: String) {
        let bytes = text.utf8
        guard (1...Self.maxLength).contains(bytes.count), bytes.allSatisfy(RoomName.isAllowed) else { return nil }
        given = text
        value = text
    }

    private init(given: String, value: String) {
        self.given = given
        self.value = value
    }

    /// The session of this name that belongs to a token's subject (nil: a token without one).
    func owned(by subject: String?) -> SessionName {
        SessionName(given: given, value: "\(given)@\(subject ?? "")")
    }

    /// Why a handshake's query must be refused with HTTP 400, or nil when its `session` is absent or valid.
    static func refusal(query: [String: String]) -> String? {
        guard let text = query["session"], SessionName(text) == nil else { return nil }
        return "session must be 1 to \(maxLength) characters of A-Z a-z 0-9 . _ -\n"
    }
}

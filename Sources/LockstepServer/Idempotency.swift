import LockstepJSON

/// An HTTP request's `Idempotency-Key`: the room applies the request at most once per key, and answers the same key
/// again with the first answer, for as long as it keeps session marks.
///
/// The key is kept as a session mark (see ``SessionMarks``) whose name no session can have, carrying the first
/// answer, so it is exactly as durable as the change it went with, on every server of a cluster.
struct Idempotency {
    /// Keys are 1 to 128 visible ASCII characters.
    static let maxLength = 128

    let key: String
    /// What was asked: the request's body, so the same key with another body is told apart.
    let digest: String

    /// The key `key` for a request of `body`, or nil when `key` is not a valid key.
    init?(key: String, body: [UInt8]) {
        let bytes = key.utf8
        guard (1...Self.maxLength).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return nil
        }
        self.key = key
        digest = StableDigest.hex(of: body)
    }

    /// The name of the key's mark: session names have no `:`, so none can be taken for it.
    var markName: String { "idempotency:\(key)" }

    /// The answer as the mark keeps it: the digest of the request and what it was answered.
    func recorded(_ answer: RequestAnswer) -> String {
        var object: JSONObject = ["digest": .string(digest)]
        switch answer {
        case .ack(_, let version, _):
            object["version"] = .int(version)
        case .error(_, let code, let message):
            object["code"] = .string(code)
            object["message"] = .string(message)
        case .scheduled(_, let timer, let due):
            object["timer"] = .string(timer)
            object["due"] = due.map(JSON.int) ?? .null
        case .message:
            break
        }
        return String(decoding: JSON.object(object).serialized(), as: UTF8.self)
    }

    /// What a request with this key is answered when its mark holds `recorded`: the first answer again, or
    /// `idempotency_mismatch` when the key came with another body.
    func replay(_ recorded: String, id: String?) -> RequestAnswer {
        guard let json = try? JSON(parsing: Array(recorded.utf8)), json["digest"]?.stringValue == digest else {
            return .error(
                id: id, code: "idempotency_mismatch",
                message: "the Idempotency-Key \(key) was used with another request; use a new key for this one")
        }
        if let version = json["version"]?.intValue { return .ack(id: id, version: version, duplicate: true) }
        if let timer = json["timer"]?.stringValue {
            return .scheduled(id: id, timer: timer, due: json["due"]?.intValue)
        }
        return .error(
            id: id, code: json["code"]?.stringValue ?? "rejected", message: json["message"]?.stringValue ?? "")
    }
}

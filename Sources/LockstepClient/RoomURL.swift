import LockstepJSON

/// A room's WebSocket address split into what stays (the base) and what changes per connection (`since`).
struct RoomURL: Sendable {
    /// `ws://HOST:PORT/rooms/ROOM` (or `wss://`), without a query.
    let base: String
    /// The room's name, from the path.
    let room: String
    /// Query parameters given in the URL (other than `since`), kept on every connection.
    let query: [(String, String)]
    /// The part of the room the connection follows (`path=`); the root for the whole room.
    let path: JSONPointer
    /// Whether the URL carries a token (`token=`).
    var hasToken: Bool { query.contains { $0.0 == "token" } }

    /// Parses `url`; a non-root `path` is the view to follow, else one given as `path=` in the URL's query.
    init(_ url: String, name: String?, session: String? = nil, path: JSONPointer = .root) throws(RoomClientError) {
        guard let scheme = ["ws://", "wss://"].first(where: { url.hasPrefix($0) }) else { throw .invalidURL(url) }
        let parts = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let base = String(parts[0])
        let location = base.dropFirst(scheme.count).drop { $0 != "/" }
        let segments = location.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 3, segments[1] == "rooms", !segments[2].isEmpty,
            segments[2].count <= 128,
            segments[2].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
        else { throw .invalidURL(url) }
        self.base = base
        self.room = String(segments[2])
        var query: [(String, String)] = []
        var path = path
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(kv[0])
                guard !["since", "epoch", "session"].contains(key), !(key == "name" && name != nil) else { continue }
                if key == "path" {
                    if path.isRoot {
                        path = try RoomClient.pointer(Self.percentDecoded(kv.count == 2 ? String(kv[1]) : ""))
                    }
                    continue
                }
                query.append((key, kv.count == 2 ? String(kv[1]) : ""))
            }
        }
        self.path = path
        if !path.isRoot { query.append(("path", Self.percentEncoded(path.description))) }
        if let name { query.append(("name", Self.percentEncoded(name))) }
        if let session { query.append(("session", session)) }
        self.query = query
    }

    /// The address for one connection: resume from `since` when given, in the history named `epoch`.
    func url(since: Int?, epoch: String? = nil) -> String {
        var query = self.query
        if let since { query.append(("since", String(since))) }
        if since != nil, let epoch { query.append(("epoch", Self.percentEncoded(epoch))) }
        guard !query.isEmpty else { return base }
        return base + "?" + query.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// A query value with its `%XX` escapes undone.
    static func percentDecoded(_ encoded: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = encoded.utf8[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Encodes everything but unreserved characters, so any display name survives the query string.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let scalar = Unicode.Scalar(byte)
            if byte < 0x80,
                scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar))
                    || "-._~".unicodeScalars.contains(scalar)
            {
                out.unicodeScalars.append(scalar)
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }
}

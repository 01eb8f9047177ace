internal import CLibWebSockets

/// Reads request data out of a wsi whose header table is still attached (handshake and HTTP callbacks only).
enum HeaderAccess {
    /// The value of one parsed header token, or nil when absent.
    static func token(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        return copied(capacity: length + 1) { lws_hdr_copy(wsi, $0, $1, token) }
    }

    /// Any header by case-insensitive name: a token lws knows, else a custom header.
    static func header(_ wsi: OpaquePointer, named name: String) -> String? {
        let lowercase = !name.utf8.contains { (65...90).contains($0) }
        let wanted = (lowercase ? name : name.lowercased()) + ":"
        if let token = knownTokens[wanted] { return self.token(wsi, token) }
        if let value = custom(wsi, named: wanted) { return value }
        return lowercase ? nil : custom(wsi, named: name + ":")
    }

    /// What `copy` writes, NUL-terminated, into a buffer of `capacity` bytes, answering its length or -1: the
    /// string is made in place, with no buffer between.
    private static func copied(
        capacity: Int, _ copy: (UnsafeMutablePointer<CChar>, Int32) -> Int32
    ) -> String? {
        var failed = false
        let value = String(unsafeUninitializedCapacity: capacity) { bytes in
            let count = bytes.withMemoryRebound(to: CChar.self) { Int(copy($0.baseAddress!, Int32($0.count))) }
            failed = count < 0
            return max(0, count)
        }
        return failed ? nil : value
    }

    /// The tokens lws parses, by lowercased name with its colon ("content-type:"): built once, since a request asks
    /// for several headers and each scan of lws's names cost an allocation per name.
    private static let knownTokens: [String: lws_token_indexes] = {
        var tokens: [String: lws_token_indexes] = [:]
        for raw in 0..<WSI_TOKEN_COUNT.rawValue {
            let token = lws_token_indexes(rawValue: raw)
            guard let cName = lws_token_to_string(token) else { continue }
            let known = String(decoding: UnsafeRawBufferPointer(start: cName, count: strlen(cName)), as: UTF8.self)
            let key = known.lowercased()
            // The first token of a name wins, as the scan it replaces found it.
            if tokens[key] == nil { tokens[key] = token }
        }
        return tokens
    }()

    private static func custom(_ wsi: OpaquePointer, named name: String) -> String? {
        let nameLength = Int32(name.utf8.count)
        return name.withCString { cName in
            let length = Int(lws_hdr_custom_length(wsi, cName, nameLength))
            guard length >= 0 else { return nil }
            return copied(capacity: length + 1) { lws_hdr_custom_copy(wsi, $0, $1, cName, nameLength) }
        }
    }

    /// URL arguments (lws has already URL-decoded them); the first value of a repeated name wins.
    static func query(_ wsi: OpaquePointer) -> [String: String] {
        var result: [String: String] = [:]
        var index: Int32 = 0
        while true {
            let length = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, index))
            guard length > 0 else { break }
            var buffer = [CChar](repeating: 0, count: length + 1)
            let copied = Int(lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index))
            index += 1
            guard copied > 0 else { continue }
            let argument = String(decoding: buffer[..<copied].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let name: Substring
            let value: Substring
            if let equals = argument.firstIndex(of: "=") {
                name = argument[..<equals]
                value = argument[argument.index(after: equals)...]
            } else {
                name = argument[...]
                value = ""
            }
            if result[String(name)] == nil { result[String(name)] = String(value) }
        }
        return result
    }

    /// The peer's numeric address.
    static func peer(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The request path without its query, for whichever method the request used.
    static func path(_ wsi: OpaquePointer) -> (method: String, path: String) {
        for (token, method) in methods {
            if let path = self.token(wsi, token) { return (method, path) }
        }
        return ("GET", "/")
    }

    /// The request's method, without copying its path.
    static func method(_ wsi: OpaquePointer) -> String {
        methods.first { token, _ in lws_hdr_total_length(wsi, token) > 0 }?.method ?? "GET"
    }

    /// lws holds the path in the token of the request's method.
    private static let methods: [(token: lws_token_indexes, method: String)] = [
        (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_HEAD_URI, "HEAD"),
        (WSI_TOKEN_PUT_URI, "PUT"), (WSI_TOKEN_DELETE_URI, "DELETE"), (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
        (WSI_TOKEN_PATCH_URI, "PATCH"),
    ]
}

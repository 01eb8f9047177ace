/// The permessage-deflate agreement (RFC 7692) a server makes with one client, read from the client's
/// `Sec-WebSocket-Extensions` offer.
///
/// The server always answers `server_no_context_takeover`: it compresses each message on its own, so one compressed
/// copy serves every deflate client. It inflates with a full 32 KiB window, so it accepts any `client_max_window_bits`
/// without narrowing it, and context takeover or not; when the client offers `client_no_context_takeover`, the
/// answer includes it and the connection keeps no inflater between messages.
///
/// Declined (the client gets plain frames): an offer asking for `server_max_window_bits` below 15 (one compressed copy
/// would not suit every client), an offer with an unknown or repeated parameter, and a header naming
/// permessage-deflate more than once (libwebsockets 4.1 fails a handshake that lists an extension twice, so the
/// server declines them all rather than pick one).
struct DeflateNegotiation: Equatable {
    /// The client promised to compress each of its messages on its own.
    let clientNoContextTakeover: Bool

    /// What follows `permessage-deflate` in the response header.
    var responseParameters: String {
        "; server_no_context_takeover" + (clientNoContextTakeover ? "; client_no_context_takeover" : "")
    }

    /// The agreement for a `Sec-WebSocket-Extensions` header, or nil when permessage-deflate is not (acceptably)
    /// offered.
    init?(offer header: String) {
        let offers = header.split(separator: ",").map { $0.split(separator: ";").map(Self.trimmed) }
        let deflateOffers = offers.filter { $0.first == "permessage-deflate" }
        guard deflateOffers.count == 1 else { return nil }
        var seen: Set<Substring> = []
        var noContextTakeover = false
        for parameter in deflateOffers[0].dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1).map(Self.trimmed)
            guard let name = parts.first, seen.insert(name).inserted else { return nil }
            let value = parts.count == 2 ? Self.windowBits(parts[1]) : nil
            switch name {
            case "server_no_context_takeover" where parts.count == 1:
                break
            case "client_no_context_takeover" where parts.count == 1:
                noContextTakeover = true
            case "server_max_window_bits" where value == 15:
                break
            case "client_max_window_bits" where parts.count == 1 || value != nil:
                break
            default:
                return nil
            }
        }
        clientNoContextTakeover = noContextTakeover
    }

    /// A window size parameter's value, 8 to 15, quoted or not.
    private static func windowBits(_ text: Substring) -> Int? {
        let quoted = text.count >= 2 && text.hasPrefix("\"") && text.hasSuffix("\"")
        let unquoted = quoted ? text.dropFirst().dropLast() : text
        guard unquoted.allSatisfy(\.isNumber), let bits = Int(unquoted), (8...15).contains(bits) else { return nil }
        return bits
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = text.lastIndex(where: { !isSpace($0) })!
        return text[first...last]
    }
}

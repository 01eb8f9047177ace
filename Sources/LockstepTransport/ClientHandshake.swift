internal import CLibWebSockets

/// The opening handshake of an outgoing connection (RFC 6455 §4.1): the upgrade request, and the check of the
/// server's answer, including `Sec-WebSocket-Accept`.
struct ClientHandshake {
    /// What a chunk of the server's answer settled.
    enum Outcome: Equatable {
        case needMore
        /// Upgraded; the bytes after the answer's headers are already WebSocket frames.
        case accepted(leftover: [UInt8], deflate: ClientDeflate?)
        case refused(String)
    }

    /// Whether the server's agreement on permessage-deflate, and its parameters.
    struct ClientDeflate: Equatable {
        /// The server compresses each message on its own: no inflater is kept between messages.
        let serverNoContextTakeover: Bool
    }

    /// The request, ready to write.
    let request: [UInt8]
    /// permessage-deflate was offered.
    private let offersDeflate: Bool
    private let expectedAccept: String
    private var answer: [UInt8] = []
    /// An answer's headers longer than this are refused rather than buffered.
    private static let answerLimit = 16 * 1024

    /// `key` is 16 random bytes (the RFC's nonce).
    /// `offerDeflate` offers permessage-deflate, promising to compress each message on its own (the client keeps no
    /// deflate state per connection).
    init(host: String, path: String, headers: [(String, String)], key: [UInt8], offerDeflate: Bool = false) {
        offersDeflate = offerDeflate
        let encodedKey = Self.base64(key)
        expectedAccept = Self.base64(Self.sha1(Array((encodedKey + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
        var text = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(encodedKey)\r\nSec-WebSocket-Version: 13\r\n"
        if offerDeflate { text += "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover\r\n" }
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        request = Array((text + "\r\n").utf8)
    }

    /// Reads the next chunk of the server's answer.
    mutating func consume(_ chunk: UnsafeRawBufferPointer) -> Outcome {
        let searchFrom = max(0, answer.count - 3)
        answer.append(contentsOf: chunk)
        guard let end = Self.headerEnd(in: answer, from: searchFrom) else {
            return answer.count > Self.answerLimit ? .refused("the server's answer has no end of headers") : .needMore
        }
        let leftover = Array(answer[end...])
        let lines = String(decoding: answer[..<end], as: UTF8.self).split(separator: "\r\n")
        answer = []
        guard let status = lines.first, status.hasPrefix("HTTP/1.1 ") else {
            return .refused("the server did not answer with HTTP/1.1")
        }
        let code = status.dropFirst(9).prefix(3)
        guard code == "101" else { return .refused("the server answered HTTP \(code) instead of upgrading") }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        guard fields["upgrade"]?.lowercased() == "websocket",
              fields["connection"]?.lowercased().split(separator: ",").contains(where: {
                  $0.trimmingSpaces() == "upgrade"
              }) == true
        else { return .refused("the server's 101 answer does not upgrade to websocket") }
        guard fields["sec-websocket-accept"] == expectedAccept else {
            return .refused("the server's Sec-WebSocket-Accept does not match the key")
        }
        guard let extensions = fields["sec-websocket-extensions"], !extensions.isEmpty else {
            return .accepted(leftover: leftover, deflate: nil)
        }
        guard offersDeflate, let deflate = Self.deflateAgreement(extensions) else {
            return .refused("the server negotiated an extension that was not offered: \(extensions)")
        }
        return .accepted(leftover: leftover, deflate: deflate)
    }

    /// The server's permessage-deflate answer, or nil when it is not one this client can follow (RFC 7692 §7.1):
    /// one extension, known parameters, each once.
    private static func deflateAgreement(_ value: String) -> ClientDeflate? {
        let parts = value.split(separator: ";").map { $0.trimmingSpaces() }
        guard parts.first == "permessage-deflate", Set(parts.dropFirst()).count == parts.count - 1 else { return nil }
        var noContextTakeover = false
        for parameter in parts.dropFirst() {
            if parameter == "server_no_context_takeover" {
                noContextTakeover = true
            } else if parameter.hasPrefix("server_max_window_bits=") {
                guard let bits = Int(parameter.dropFirst("server_max_window_bits=".count)), (8...15).contains(bits)
                else { return nil }
            } else if parameter != "client_no_context_takeover" {
                return nil
            }
        }
        return ClientDeflate(serverNoContextTakeover: noContextTakeover)
    }

    /// The index just past the first `\r\n\r\n` at or after `start`.
    private static func headerEnd(in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = start
        while index + 4 <= bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    private static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        _ = lws_SHA1(bytes, bytes.count, &digest)
        return digest
    }

    private static func base64(_ bytes: [UInt8]) -> String {
        // lws wants room beyond the encoded length and the terminator.
        var output = [CChar](repeating: 0, count: (bytes.count + 2) / 3 * 4 + 8)
        let length = bytes.withUnsafeBufferPointer { input in
            input.withMemoryRebound(to: CChar.self) { input in
                lws_b64_encode_string(input.baseAddress, Int32(input.count), &output, Int32(output.count))
            }
        }
        return String(decoding: output.prefix(Int(max(0, length))).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}

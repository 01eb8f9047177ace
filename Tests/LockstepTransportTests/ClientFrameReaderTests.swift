import Testing
@testable import LockstepTransport

/// What the reader reported, copied out of the lent buffers.
private enum Seen: Equatable {
    case text(String)
    case binary([UInt8])
    case tooLarge(Int)
    case ping([UInt8])
    case close(UInt16?, String)
}

/// An unmasked server frame.
private func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
    let count = payload.count
    if count < 126 {
        bytes.append(UInt8(count))
    } else if count <= 0xFFFF {
        bytes += [126, UInt8(count >> 8), UInt8(count & 0xFF)]
    } else {
        bytes.append(127)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8((UInt64(count) >> UInt64(shift)) & 0xFF))
        }
    }
    return bytes + payload
}

private func text(_ string: String, fin: Bool = true) -> [UInt8] { frame(0x1, Array(string.utf8), fin: fin) }

/// Feeds `stream` in the given chunk sizes (cycled) and collects what the reader reported.
private func read(_ stream: [UInt8], chunks: [Int] = [Int.max], limit: Int = 1 << 20) throws -> [Seen] {
    var reader = ClientFrameReader(limit: limit)
    var seen: [Seen] = []
    var offset = 0
    var index = 0
    while offset < stream.count {
        let size = min(chunks[index % chunks.count], stream.count - offset)
        index += 1
        try stream[offset..<offset + size].withUnsafeBytes { chunk in
            try reader.consume(chunk) { event in
                switch event {
                case .message(let bytes, let binary, _):
                    seen.append(binary ? .binary(Array(bytes)) : .text(String(decoding: bytes, as: UTF8.self)))
                case .tooLarge(let size): seen.append(.tooLarge(size))
                case .ping(let payload): seen.append(.ping(Array(payload)))
                case .close(let code, let reason): seen.append(.close(code, String(decoding: reason, as: UTF8.self)))
                }
                return true
            }
        }
        offset += size
    }
    return seen
}

@Suite struct ClientFrameReaderTests {
    /// Every kind of frame the reader must handle, in one stream.
    private let stream: [UInt8] =
        text("hello") + text("") + frame(0x2, [0, 1, 2, 255])
        + text(String(repeating: "m", count: 300)) + text(String(repeating: "x", count: 70_000))
        + text("frag", fin: false) + frame(0x9, [7, 7]) + frame(0x0, Array("men".utf8), fin: false)
        + frame(0x0, [], fin: false) + frame(0x0, Array("ted".utf8)) + frame(0xA, [1])
        + frame(0x8, [0x03, 0xE8] + Array("bye".utf8))
    private let expected: [Seen] = [
        .text("hello"), .text(""), .binary([0, 1, 2, 255]), .text(String(repeating: "m", count: 300)),
        .text(String(repeating: "x", count: 70_000)), .ping([7, 7]), .text("fragmented"), .close(1000, "bye"),
    ]

    @Test func wholeStreamInOneRead() throws {
        #expect(try read(stream) == expected)
    }

    @Test func everySplitPointOfTheSmallFrames() throws {
        // The first 4 frames are short: split their bytes at every position into two reads.
        let prefix = Array(stream.prefix(2 + 5 + 2 + 2 + 4 + 4 + 300))
        for split in 1..<prefix.count {
            #expect(try read(prefix, chunks: [split, Int.max]) == Array(expected.prefix(4)), "split at \(split)")
        }
    }

    @Test func readsOfOneAndOfOddSizes() throws {
        #expect(try read(stream, chunks: [1]) == expected)
        #expect(try read(stream, chunks: [3, 7, 4096, 1, 13]) == expected)
    }

    @Test func closeWithoutCodeAndEmptyReason() throws {
        #expect(try read(frame(0x8, [])) == [.close(nil, "")])
    }

    @Test func oversizedMessagesAreSkippedAndTheNextOneArrives() throws {
        let big = text(String(repeating: "b", count: 5_000))
        let fragmented =
            text(String(repeating: "c", count: 600), fin: false) + frame(0x0, Array(repeating: 99, count: 600))
        let stream = big + text("after") + fragmented + text("last")
        for chunks in [[Int.max], [1], [100, 7]] {
            #expect(
                try read(stream, chunks: chunks, limit: 1_000) == [
                    .tooLarge(5_000), .text("after"), .tooLarge(1_200), .text("last"),
                ]
            )
        }
    }

    @Test func framingViolationsAreRejected() {
        let masked: [UInt8] = [0x81, 0x82, 1, 2, 3, 4, 0, 0]
        let reserved: [UInt8] = [0xC1, 0x00]
        let longControl = frame(0x9, Array(repeating: 0, count: 126))
        let fragmentedControl = frame(0x8, [], fin: false)
        let strayContinuation = frame(0x0, [1])
        let nestedMessage = text("a", fin: false) + text("b")
        let unknownOpcode = frame(0x3, [])
        let hugeLength: [UInt8] = [0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 0]
        for bad in [
            masked, reserved, longControl, fragmentedControl, strayContinuation, nestedMessage, unknownOpcode,
            hugeLength,
        ] {
            #expect(throws: ClientFrameReader.ProtocolViolation.self) { try read(bad) }
        }
    }

    @Test func handlerCanStopTheRead() throws {
        var reader = ClientFrameReader(limit: 1 << 20)
        var count = 0
        let stream = text("one") + frame(0x8, [0x03, 0xE8]) + text("after close")
        try stream.withUnsafeBytes { chunk in
            try reader.consume(chunk) { event in
                count += 1
                if case .close = event { return false }
                return true
            }
        }
        #expect(count == 2)
    }
}

@Suite struct ClientHandshakeTests {
    /// RFC 6455 §1.3's example: the nonce "the sample nonce" is answered with this accept value.
    private let sampleKey = Array("the sample nonce".utf8)
    private let sampleAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

    private func answer(
        _ handshake: inout ClientHandshake, _ text: String, then extra: [UInt8] = [], in chunks: Int = 1
    ) -> ClientHandshake.Outcome {
        let bytes = Array(text.utf8) + extra
        let size = (bytes.count + chunks - 1) / chunks
        var outcome = ClientHandshake.Outcome.needMore
        for start in stride(from: 0, to: bytes.count, by: size) {
            outcome = bytes[start..<min(start + size, bytes.count)].withUnsafeBytes { handshake.consume($0) }
            if outcome != .needMore { break }
        }
        return outcome
    }

    @Test func requestCarriesTheKeyAndHeaders() {
        let handshake = ClientHandshake(
            host: "example.com:8080", path: "/rooms/a?since=3", headers: [("Authorization", "Bearer t")], key: sampleKey
        )
        let request = String(decoding: handshake.request, as: UTF8.self)
        #expect(request.hasPrefix("GET /rooms/a?since=3 HTTP/1.1\r\nHost: example.com:8080\r\n"))
        #expect(request.contains("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"))
        #expect(request.contains("Sec-WebSocket-Version: 13\r\n"))
        #expect(request.contains("Authorization: Bearer t\r\n"))
        #expect(request.hasSuffix("\r\n\r\n"))
    }

    @Test func acceptsTheRightAnswerAndKeepsWhatFollows() {
        let text =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(sampleAccept)\r\n\r\n"
        let frame: [UInt8] = [0x81, 0x02, 0x68, 0x69]
        // In one read, in three (the end of headers and the frame in the last), and a byte at a time (the answer
        // is complete before the frame arrives, so nothing is left over).
        for (chunks, leftover) in [(1, frame), (3, frame), (text.utf8.count + 4, [])] {
            var handshake = ClientHandshake(host: "h", path: "/", headers: [], key: sampleKey)
            #expect(answer(&handshake, text, then: frame, in: chunks) == .accepted(leftover: leftover, deflate: nil))
        }
    }

    @Test func refusesWrongAnswers() {
        let good = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(sampleAccept)\r\n"
        let refusals = [
            "HTTP/1.1 503 Service Unavailable\r\n\r\n",
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: x\r\n\r\n",
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(sampleAccept)\r\n\r\n",
            "HTTP/1.1 101 Switching Protocols\r\n\(good)Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
            "SSH-2.0-OpenSSH\r\n\r\n",
        ]
        for text in refusals {
            var handshake = ClientHandshake(host: "h", path: "/", headers: [], key: sampleKey)
            guard case .refused = answer(&handshake, text) else {
                Issue.record("accepted: \(text)")
                continue
            }
        }
    }

    @Test func refusesAnAnswerWithoutEnd() {
        var handshake = ClientHandshake(host: "h", path: "/", headers: [], key: sampleKey)
        let endless = "HTTP/1.1 101 Switching Protocols\r\n" + String(repeating: "X-Filler: y\r\n", count: 2_000)
        guard case .refused = answer(&handshake, endless, in: 40) else {
            Issue.record("an answer of \(endless.utf8.count) bytes without an end was not refused")
            return
        }
    }
}

import Foundation
import Glibc
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// permessage-deflate (RFC 7692) on raw frames: what the server agrees to, what it sends, what it accepts. Python's
/// zlib compresses and inflates on the client's side, so neither side checks itself.
@Suite(.timeLimit(.minutes(2))) struct CompressionTests {
    private static let offer = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"

    @Test func theServerAnswersServerNoContextTakeover() async throws {
        try await withServer(app: .json) { server in
            let cases: [(offer: String?, answer: String?)] = [
                ("permessage-deflate; client_max_window_bits", "permessage-deflate; server_no_context_takeover"),
                ("permessage-deflate", "permessage-deflate; server_no_context_takeover"),
                (
                    "permessage-deflate; client_no_context_takeover; server_max_window_bits=15",
                    "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
                ),
                ("permessage-deflate; server_max_window_bits=10", nil),
                ("permessage-deflate; unknown_parameter", nil),
                ("x-webkit-deflate-frame", nil),
                (nil, nil),
            ]
            for (offer, expected) in cases {
                let headers = offer.map { ["Sec-WebSocket-Extensions: \($0)"] } ?? []
                var socket = try RawWebSocket(port: server.port, path: "/rooms/n", headers: headers)
                let head = try socket.head()
                socket.close()
                #expect(head.hasPrefix("HTTP/1.1 101"), "\(offer ?? "no offer"): \(head)")
                let line = head.split(separator: "\r\n").first {
                    $0.lowercased().hasPrefix("sec-websocket-extensions:")
                }
                #expect(line.map { String($0.dropFirst("Sec-WebSocket-Extensions: ".count)) } == expected, "\(head)")
            }
        }
        try await withServer(app: .json, configure: { $0.compression = false }) { server in
            var socket = try RawWebSocket(port: server.port, path: "/rooms/n", headers: [Self.offer])
            let head = try socket.head()
            socket.close()
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
            #expect(!head.lowercased().contains("sec-websocket-extensions"), "\(head)")
        }
    }

    @Test func largeMessagesAreCompressedOnceForEveryDeflateClient() async throws {
        try await withServer(app: .json) { server in
            var first = try RawWebSocket(port: server.port, path: "/rooms/c", headers: [Self.offer])
            var second = try RawWebSocket(port: server.port, path: "/rooms/c", headers: [Self.offer])
            var plain = try RawWebSocket(port: server.port, path: "/rooms/c")
            let isSnapshot: (String) -> Bool = { $0.contains(#""type":"snapshot""#) }
            #expect(try first.status() == 101 && second.status() == 101 && plain.status() == 101)
            _ = try (next(&first, until: isSnapshot), next(&second, until: isSnapshot), next(&plain, until: isSnapshot))
            let value = (0..<200).map { "item \($0) of a list long enough to compress" }.joined(separator: ", ")
            let write = #"{"type":"action","id":"w","action":{"type":"patch","ops":"#
                + #"[{"op":"add","path":"/big","value":""# + value + #""}]}}"#
            try plain.send(Array(write.utf8))
            let isPatch: (String) -> Bool = { $0.contains(#""type":"patch""#) }
            let plainPatch = try next(&plain, until: isPatch)
            let firstPatch = try next(&first, until: isPatch)
            let secondPatch = try next(&second, until: isPatch)
            #expect(plainPatch.first & 0x40 == 0, "a plain client gets no RSV1")
            #expect(firstPatch.first & 0x40 != 0 && secondPatch.first & 0x40 != 0, "RSV1 on a large message")
            #expect(firstPatch.payload == secondPatch.payload, "the same compressed bytes for both")
            #expect(firstPatch.payload.count * 4 < plainPatch.payload.count, "\(firstPatch.payload.count) bytes")
            #expect(firstPatch.text == plainPatch.text, "it inflates to the plain message")
            // Small messages go uncompressed, to deflate clients too.
            try first.send(Array(#"{"type":"action","id":"s","action":{"type":"patch","ops":[]}}"#.utf8))
            let ack = try next(&first) { $0.contains(#""id":"s""#) }
            #expect(ack.first & 0x40 == 0, "\(ack.text)")
            for socket in [first, second, plain] { socket.close() }
        }
    }

    @Test func clientMessagesInflateWithAndWithoutContextTakeover() async throws {
        try await withServer(app: .json) { server in
            let actions = (1...3).map { index in
                #"{"type":"action","id":"a\#(index)","action":{"type":"patch","ops":[{"op":"add","path":"/k\#(index)","#
                    + #""value":"the same words again and again, the same words again and again \#(index)"}]}}"#
            }
            for takeover in [true, false] {
                let offer = takeover ? Self.offer : Self.offer + "; client_no_context_takeover"
                var socket = try RawWebSocket(port: server.port, path: "/rooms/in\(takeover)", headers: [offer])
                #expect(try socket.status() == 101)
                _ = try next(&socket) { $0.contains(#""type":"snapshot""#) }
                let payloads = try await deflate(actions, contextTakeover: takeover)
                if takeover {
                    #expect(payloads[2].count < payloads[0].count / 2, "later messages refer back to earlier ones")
                }
                for payload in payloads { try socket.send(payload, compressed: true) }
                for index in 1...3 {
                    let ack = try next(&socket) { $0.contains(#""type":"ack""#) }
                    #expect(ack.text.contains(#""id":"a\#(index)""#), "\(ack.text)")
                }
                socket.close()
            }
            // Data that does not inflate fails the connection (RFC 7692 §8).
            var broken = try RawWebSocket(port: server.port, path: "/rooms/broken", headers: [Self.offer])
            #expect(try broken.status() == 101)
            try broken.send([0xFF, 0xFF, 0xFF, 0xFF, 0x00], compressed: true)
            var code: UInt16?
            while code == nil, let frame = try? broken.frame() {
                if frame.opcode == 8 { code = UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) }
            }
            #expect(code == 1007)
            broken.close()
        }
    }

    /// A 600 kB frame that would inflate to 512 MiB: refused as `too_large` after inflating one `--max-frame`, and
    /// the server (its own process, so its RSS is its own) hardly grows.
    @Test func aDeflateBombIsRefusedCheaply() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bombPath = directory + "/bomb"
        let script = """
            import sys, zlib
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            out = [c.compress(b'{"type":"action","id":"b","action":{"type":"patch","ops":'
                              b'[{"op":"add","path":"/x","value":"')]
            zeros = b"0" * (1 << 20)
            for _ in range(512):
                out.append(c.compress(zeros))
            out.append(c.flush(zlib.Z_SYNC_FLUSH)[:-4])
            open(sys.argv[1], "wb").write(b"".join(out))
            """
        _ = try await ChildProcess.output(of: "/usr/bin/env", ["python3", "-c", script, bombPath])
        let bomb = Array(try Data(contentsOf: URL(fileURLWithPath: bombPath)))
        #expect(bomb.count < 1 << 20, "the compressed frame is under --max-frame: \(bomb.count)")
        let server = try await ServerProcess.start(arguments: ["--memory", "--app", "json"])
        defer { server.terminate() }
        var socket = try RawWebSocket(port: server.port, path: "/rooms/bomb", headers: [Self.offer])
        #expect(try socket.status() == 101)
        _ = try next(&socket) { $0.contains(#""type":"snapshot""#) }
        let before = try residentKiB(server.child.pid)
        try socket.send(bomb, compressed: true)
        let error = try next(&socket) { $0.contains(#""type":"error""#) }
        #expect(error.text.contains(#""code":"too_large""#), "\(error.text)")
        var closeCode: UInt16?
        while closeCode == nil, let frame = try? socket.frame() {
            if frame.opcode == 8 { closeCode = UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) }
        }
        #expect(closeCode == 1009)
        let after = try residentKiB(server.child.pid)
        #expect(after - before < 8 * 1024, "RSS grew from \(before) KiB to \(after) KiB")
        socket.close()
    }

    // MARK: - Helpers

    /// A frame read from the server: its first header byte, payload, and text (inflated when RSV1 is set).
    struct Frame {
        let first: UInt8
        let payload: [UInt8]
        let text: String
    }

    /// Reads frames until one whose text satisfies `match`.
    private func next(_ socket: inout RawWebSocket, until match: (String) -> Bool) throws -> Frame {
        while true {
            let (first, payload) = try socket.rawFrame()
            let text = first & 0x40 != 0 ? try inflate(payload) : String(decoding: payload, as: UTF8.self)
            if match(text) { return Frame(first: first, payload: payload, text: text) }
        }
    }

    /// Inflates one permessage-deflate message with Python's zlib (blocking: these tests read sockets the same way).
    private func inflate(_ payload: [UInt8]) throws -> String {
        let hex = payload.map { String(format: "%02x", $0) }.joined()
        let script = """
            import sys, zlib
            data = bytes.fromhex(sys.argv[1]) + b"\\x00\\x00\\xff\\xff"
            print(zlib.decompressobj(-15).decompress(data).decode(), end="")
            """
        let child = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3", "-c", script, hex])
        let output = child.readToEnd()
        child.waitForExit()
        return String(decoding: output, as: UTF8.self)
    }

    /// Each message compressed with Python's zlib, with one deflate stream across them (context takeover) or a new
    /// one for each.
    private func deflate(_ messages: [String], contextTakeover: Bool) async throws -> [[UInt8]] {
        let script = """
            import sys, zlib
            c = None
            for text in sys.argv[2:]:
                if c is None or sys.argv[1] == "fresh":
                    c = zlib.compressobj(6, zlib.DEFLATED, -15)
                print((c.compress(text.encode()) + c.flush(zlib.Z_SYNC_FLUSH))[:-4].hex())
            """
        let mode = contextTakeover ? "takeover" : "fresh"
        let output = try await ChildProcess.output(of: "/usr/bin/env", ["python3", "-c", script, mode] + messages)
        return output.split(separator: "\n").map { line in
            stride(from: 0, to: line.count, by: 2).map { offset in
                let start = line.index(line.startIndex, offsetBy: offset)
                return UInt8(line[start..<line.index(start, offsetBy: 2)], radix: 16)!
            }
        }
    }

    private func residentKiB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

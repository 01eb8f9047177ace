import Glibc
import LockstepJSON
import LockstepTestSupport
// `timeval` members resolve through this shim once another module of the test target imports it.
import SwiftOverlayShims

/// A WebSocket client written by hand over a POSIX socket, for handshakes the test client cannot
/// make (extra headers) and for reading exactly what the server sends first.
struct RawWebSocket {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects and sends the upgrade request; `status` is the HTTP status the server answered with. A small
    /// `receiveBufferBytes` makes a client that does not read hold the server's writes back sooner.
    init(
        port: Int, path: String, headers: [String] = [], timeoutSeconds: Int = 10, receiveBufferBytes: Int32? = nil
    ) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError.failed("socket") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var bytes = receiveBufferBytes {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        try RawSocket.connect(fd, port: port)
        let request = [
            "GET \(path) HTTP/1.1", "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
        ] + headers
        try RawSocket.write(fd, Array((request.joined(separator: "\r\n") + "\r\n\r\n").utf8))
    }

    /// The status line's code, once the response head has arrived.
    mutating func status() throws -> Int {
        let parts = try head().split(separator: " ")
        guard parts.count >= 2, let code = Int(parts[1]) else { throw RawSocketError.failed("bad status") }
        return code
    }

    /// The response head (status line and headers, without the blank line), once it has arrived.
    mutating func head() throws -> String {
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = buffer.indices.first(where: { buffer[$0...].starts(with: separator) }) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                return head
            }
            try fill()
        }
    }

    /// The next frame: its opcode and payload.
    mutating func frame() throws -> (opcode: UInt8, payload: [UInt8]) {
        let frame = try rawFrame()
        return (frame.first & 0x0F, frame.payload)
    }

    /// The next frame with its first header byte (FIN, RSV1-3, opcode) and payload.
    mutating func rawFrame() throws -> (first: UInt8, payload: [UInt8]) {
        while true {
            if buffer.count >= 2 {
                var length = Int(buffer[1] & 0x7F)
                var offset = 2
                if length == 126, buffer.count >= 4 {
                    length = Int(buffer[2]) << 8 | Int(buffer[3])
                    offset = 4
                } else if length == 127, buffer.count >= 10 {
                    length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
                    offset = 10
                }
                if length < 126 || offset > 2, buffer.count >= offset + length {
                    let frame = (buffer[0], Array(buffer[offset..<(offset + length)]))
                    buffer.removeFirst(offset + length)
                    return frame
                }
            }
            try fill()
        }
    }

    /// Sends one masked, final frame; `compressed` sets RSV1 (a permessage-deflate message).
    func send(_ payload: [UInt8], opcode: UInt8 = 1, compressed: Bool = false) throws {
        try RawSocket.write(fd, Self.frame(payload, opcode: opcode, compressed: compressed))
    }

    /// Text frames for all of `payloads` in one write, so that they reach the server's socket together.
    func send(all payloads: [[UInt8]]) throws {
        try RawSocket.write(fd, payloads.flatMap { Self.frame($0, opcode: 1, compressed: false) })
    }

    /// One masked client frame.
    private static func frame(_ payload: [UInt8], opcode: UInt8, compressed: Bool) -> [UInt8] {
        var frame: [UInt8] = [0x80 | (compressed ? 0x40 : 0) | opcode]
        let count = payload.count
        if count < 126 {
            frame.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            frame += [0x80 | 126, UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((count >> ($0 * 8)) & 0xFF) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        return frame
    }

    /// The next text frame as JSON.
    mutating func json() throws -> JSON {
        let frame = try frame()
        guard frame.opcode == 1 else { throw RawSocketError.failed("opcode \(frame.opcode), not text") }
        return try JSON(parsing: frame.payload)
    }

    /// The close code of the next frame, which must be a close frame.
    mutating func closeCode() throws -> UInt16? {
        let frame = try frame()
        guard frame.opcode == 8, frame.payload.count >= 2 else { return nil }
        return UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])
    }

    private mutating func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = read(fd, &chunk, chunk.count)
        guard count > 0 else { throw RawSocketError.failed("closed") }
        buffer += chunk[0..<count]
    }

    func close() {
        Glibc.close(fd)
    }
}

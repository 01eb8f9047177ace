import Testing
@testable import LockstepTransport
#if canImport(Glibc)
import Glibc
#endif

func residentBytes() -> Int {
    let fd = open("/proc/self/statm", O_RDONLY)
    defer { Glibc.close(fd) }
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = read(fd, &buffer, buffer.count)
    let fields = String(decoding: buffer[..<max(count, 0)], as: UTF8.self).split(separator: " ")
    return Int(fields[1])! * Int(sysconf(Int32(_SC_PAGESIZE)))
}

@Test(.enabled(if: getenv("LOCKSTEP_RSS_PROBE") != nil)) func rssPerIdleConnection() async throws {
    let delegate = TestDelegate()
    let server = try makeServer(delegate)
    defer { server.shutdown() }
    var sockets: [RawSocket] = []
    // Warm up allocator and lws pools.
    for _ in 0..<200 { let s = try RawSocket(port: server.port); _ = s.handshake(); sockets.append(s) }
    #expect(await delegate.recorder.wait { $0.count == 200 })
    let before = residentBytes()
    let n = 8000
    for _ in 0..<n { let s = try RawSocket(port: server.port); _ = s.handshake(); sockets.append(s) }
    #expect(await delegate.recorder.wait(timeout: 60) { $0.count == n + 200 })
    let after = residentBytes()
    print("RSS-PROBE before=\(before) after=\(after) perConnection=\((after - before) / n)")
}

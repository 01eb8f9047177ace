import Glibc
import Testing
@testable import LockstepTransport

/// The sockets a thread waits on (`SocketReadiness`): only those ready are handed over, each under its tag, and a
/// socket watched again waits for what it is watched for now.
struct SocketReadinessTests {
    /// A connected pair of local stream sockets.
    private func pair() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        return (ends[0], ends[1])
    }

    @Test func onlyTheReadySocketsAreHandedOverUnderTheirTags() throws {
        let readiness = try SocketReadiness(batch: 8)
        let (a, peerA) = try pair()
        let (b, peerB) = try pair()
        defer { for end in [a, peerA, b, peerB] { close(end) } }
        readiness.watch(a, tag: 7, output: false, again: false)
        readiness.watch(b, tag: 9, output: false, again: false)
        var seen: [(UInt32, Bool, Bool)] = []
        #expect(readiness.wait(milliseconds: 0) { seen.append(($0, $1, $2)) } == 0)
        #expect(write(peerB, "x", 1) == 1)
        #expect(readiness.wait(milliseconds: 1_000) { seen.append(($0, $1, $2)) } == 1)
        #expect(seen.count == 1 && seen[0] == (9, true, false))
    }

    @Test func aSocketWatchedAgainWaitsForWhatItIsWatchedForNow() throws {
        let readiness = try SocketReadiness(batch: 8)
        let (a, peer) = try pair()
        defer { for end in [a, peer] { close(end) } }
        readiness.watch(a, tag: 1, output: false, again: false)
        // An idle socket can be written: watched for output too, it is ready at once.
        readiness.watch(a, tag: 1, output: true, again: true)
        var seen: [(UInt32, Bool, Bool)] = []
        #expect(readiness.wait(milliseconds: 1_000) { seen.append(($0, $1, $2)) } == 1)
        #expect(seen.count == 1 && seen[0] == (1, false, true))
        readiness.watch(a, tag: 1, output: false, again: true)
        #expect(readiness.wait(milliseconds: 0) { _, _, _ in } == 0)
    }
}

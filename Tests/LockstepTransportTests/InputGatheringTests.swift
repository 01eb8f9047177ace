import LockstepTestSupport
import Synchronization
import Testing
@testable import LockstepTransport

#if canImport(Glibc)
import Glibc
#endif

// Three minutes: each test's waits are bounded by `withTimeout`'s minute, on a loaded machine.
@Suite(.timeLimit(.minutes(3)))
struct InputGatheringTests {
    /// A server whose loop lets input gather for `interval` after a pass that only read.
    private func gatheringServer(_ delegate: TestDelegate, interval: Duration) throws -> WebSocketServer {
        var configuration = WebSocketServer.Configuration(port: 0)
        configuration.gatherInterval = interval
        return try WebSocketServer(configuration: configuration, delegate: delegate)
    }

    @Test func messagesThatNeedNoAnswerFromManySocketsAreReadInFewPasses() async throws {
        let delegate = TestDelegate()
        let server = try gatheringServer(delegate, interval: .milliseconds(100))
        defer { server.shutdown() }
        try await withTimeout {
            let sockets = try (0..<8).map { _ in try RawSocket(port: server.port) }
            try await offThePool {
                for socket in sockets { #expect(socket.handshake().hasPrefix("HTTP/1.1 101")) }
                // The input under test is spread over time: 40 rounds 3 ms apart, which without gathering cost a wake
                // and a pass for nearly every round (a loaded machine can only merge more of them).
                for round in 0..<40 {
                    for socket in sockets {
                        socket.write(RawSocket.frame(opcode: 1, fin: true, payload: Array("quiet:\(round)".utf8)))
                    }
                    usleep(3_000)
                }
            }
            try await waitOnLoop(server) { delegate.passesOfMessages.count == 320 }
        }
        let passes = await onLoop(server) { Set(delegate.passesOfMessages).count }
        #expect(passes <= 12, "320 messages over about 120 ms took \(passes) passes")
    }

    @Test func aClientWaitingForEachAnswerIsNeverHeldBack() async throws {
        let delegate = TestDelegate()
        // Held back even once, an exchange would take most of the interval.
        let server = try gatheringServer(delegate, interval: .seconds(5))
        defer { server.shutdown() }
        let bodyLength = delegate.httpBody.count
        let start = ContinuousClock.now
        try await withTimeout {
            let socket = try RawSocket(port: server.port)
            let http = try RawSocket(port: server.port)
            try await offThePool {
                #expect(socket.handshake().hasPrefix("HTTP/1.1 101"))
                var parser = FrameParser()
                // Answered in the pass that read it, then from another thread (as after a storage commit).
                for message in (0..<5).map({ "echo \($0)" }) + (0..<5).map({ "later:\($0)" }) {
                    socket.write(RawSocket.frame(opcode: 1, fin: true, payload: Array(message.utf8)))
                    var frames = parser.feed(socket.readOnce())
                    while frames.isEmpty { frames = parser.feed(socket.readOnce()) }
                    let answer = String(decoding: frames[0].payload, as: UTF8.self)
                    #expect(answer == message.replacing("later:", with: ""))
                }
                // HTTP keep-alive: after each answer, libwebsockets ends the transaction in a pass that reads nothing.
                for _ in 0..<5 {
                    http.get("/page")
                    #expect(http.readHead().hasPrefix("HTTP/1.1 200"))
                    #expect(http.readBody(count: bodyLength).count == bodyLength)
                }
            }
        }
        #expect(ContinuousClock.now - start < .seconds(4))
    }

    @Test func workFromAnotherThreadEndsAWait() async throws {
        let gathering = InputGathering(interval: .seconds(60))
        let start = ContinuousClock.now
        // The wait asks whether work is waiting once it is set to be interrupted: the interrupt comes after that.
        let (checked, checking) = AsyncStream<Void>.makeStream()
        async let waited: Void = offThePool {
            gathering.passBegins()
            gathering.wait {
                checking.yield()
                return false
            }
        }
        for await _ in checked { break }
        gathering.interrupt()
        try await waited
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    @Test func anInterruptThatRacedACheckDoesNotCutTheNextWaitShort() async throws {
        let waited = try await offThePool {
            let gathering = InputGathering(interval: .milliseconds(200))
            gathering.passBegins()
            // Work came (and its submitter interrupted) between the flag and the check: no wait, its signal consumed.
            gathering.wait {
                gathering.interrupt()
                return true
            }
            gathering.passBegins()
            let start = ContinuousClock.now
            gathering.wait { false }
            return ContinuousClock.now - start
        }
        #expect(waited >= .milliseconds(150))
    }
}

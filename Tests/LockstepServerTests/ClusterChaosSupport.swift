import Foundation
import LockstepTestSupport
import Synchronization

/// A `lockstep serve --postgres` process that can be killed with -9 and started again on the same port, so the
/// clients that keep reconnecting to that address find a server there again.
final class NodeProcess: Sendable {
    let port: Int
    private let arguments: [String]
    private let process: Mutex<ServerProcess?>

    private init(_ process: ServerProcess, arguments: [String]) {
        port = process.port
        self.arguments = arguments
        self.process = Mutex(process)
    }

    /// Starts a node on a free port; the wait for its first line runs on a thread of its own.
    static func start(arguments: [String]) async throws -> NodeProcess {
        NodeProcess(try await ServerProcess.start(arguments: arguments), arguments: arguments)
    }

    var isRunning: Bool { process.withLock { $0 != nil } }

    /// The exit code of a node that ended without being stopped (a crash); nil while it runs or once stopped.
    var crashCode: Int32? { process.withLock { $0?.child.exitCode } }

    /// SIGKILL, as in a crash; nothing when it is not running.
    func kill9() {
        let running = process.withLock { process in
            defer { process = nil }
            return process
        }
        running?.kill9()
    }

    /// SIGTERM, as a deployment stops a node: it drains. Its exit status and how long that took; nothing when it is
    /// not running.
    func terminate() async -> (status: Int32, took: Duration)? {
        let running = process.withLock { process in
            defer { process = nil }
            return process
        }
        guard let running else { return nil }
        let start = ContinuousClock.now
        running.child.send(SIGTERM)
        let status = (try? await offThePool { running.child.waitForExit() }) ?? -1
        return (status, ContinuousClock.now - start)
    }

    /// Starts the node again on its port; a start that fails (the port still held by the killed process's closing
    /// connections) is tried again.
    func restart() async throws {
        guard !isRunning else { return }
        let arguments = arguments + ["--port", "\(port)"]
        var failure: (any Error)?
        for _ in 0..<40 {
            do {
                let started = try await ServerProcess.start(arguments: arguments)
                process.withLock { $0 = started }
                return
            } catch {
                failure = error
                // A pause before trying the port again.
                try await Task.sleep(for: .milliseconds(250))
            }
        }
        throw failure ?? ServerProcessError.didNotStart("port \(port)")
    }

    /// Stops it for good at the end of a test: nothing it holds matters any more, so no drain is waited for.
    func stop() { kill9() }
}

/// A flag set once by one task and read by others (a stop signal).
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// Holds back every task that waits on it until `count` of them wait, then lets them all go at once, so work
/// prepared one by one starts at the same moment.
actor StartingGate {
    private let count: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var isOpen = false

    init(count: Int) {
        self.count = count
    }

    func wait() async {
        guard !isOpen else { return }
        await withCheckedContinuation { continuation in
            waiting.append(continuation)
            guard waiting.count >= count else { return }
            isOpen = true
            for waiter in waiting { waiter.resume() }
            waiting.removeAll()
        }
    }
}

import Foundation
import Glibc
import LockstepTestSupport

/// A `lockstep serve` child process, for what only a real process shows: `kill -9`, signals, exit codes.
final class ServerProcess: Sendable {
    let child: ChildProcess
    let port: Int
    /// What the child wrote up to the line naming its port (with its log when started with `mergeErrors`).
    let startupOutput: String

    /// Starts the built `lockstep` binary and waits, off the task pool, for the line that names its port: a
    /// debug binary starting on a busy machine would otherwise hold one of the pool's two threads for seconds.
    /// With `mergingLog`, its log is read with its output (``readOutput(until:seconds:)``).
    static func start(arguments: [String], mergingLog: Bool = false) async throws -> ServerProcess {
        try await offThePool { try ServerProcess(arguments: arguments, mergingLog: mergingLog) }
    }

    /// The same with `RLIMIT_NOFILE` lowered to `descriptorLimit` (see ``init(arguments:descriptorLimit:)``).
    static func start(arguments: [String], descriptorLimit: Int) async throws -> ServerProcess {
        try await offThePool { try ServerProcess(arguments: arguments, descriptorLimit: descriptorLimit) }
    }

    /// Starts the built `lockstep` binary and waits for the line that names its port. Blocks: call it off the task
    /// pool, as ``start(arguments:)`` does.
    convenience init(arguments: [String], mergingLog: Bool = false) throws {
        try self.init(
            child: ChildProcess(
                executable: try builtExecutable("lockstep"), arguments: ["serve", "--port", "0"] + arguments,
                mergeErrors: mergingLog))
    }

    /// Starts it with `RLIMIT_NOFILE` lowered to `descriptorLimit`, soft and hard (through `prlimit`, so it cannot
    /// raise it back), its log merged into the output read.
    convenience init(arguments: [String], descriptorLimit: Int) throws {
        let serve = [try builtExecutable("lockstep"), "serve", "--port", "0"] + arguments
        try self.init(
            child: ChildProcess(
                executable: "/usr/bin/prlimit", arguments: ["--nofile=\(descriptorLimit)", "--"] + serve,
                mergeErrors: true))
    }

    /// Starts it inside `namespace`, listening on the namespace's address, reachable from this one.
    convenience init(in namespace: NetworkNamespace, arguments: [String]) throws {
        let serve = ["serve", "--host", namespace.innerAddress, "--port", "0", "--insecure"]
        try self.init(child: namespace.spawn(try builtExecutable("lockstep"), serve + arguments))
    }

    private init(child: ChildProcess) throws {
        self.child = child
        var text = ""
        var chunk = [UInt8](repeating: 0, count: 4_096)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !text.contains("/rooms/ROOM"), let count = child.readChunk(into: &chunk) {
            text += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        guard let range = text.range(of: #":\d+/rooms/ROOM"#, options: .regularExpression),
            let port = Int(text[range].dropFirst().prefix { $0.isNumber })
        else {
            child.send(SIGTERM)
            child.waitForExit()
            throw ServerProcessError.didNotStart(text)
        }
        self.port = port
        startupOutput = text
    }

    /// Reads the child's output until it contains `needle` or `seconds` pass; returns what was read. Blocks: call it
    /// off the task pool.
    func readOutput(until needle: String, seconds: Double) -> String {
        var text = ""
        var chunk = [UInt8](repeating: 0, count: 4_096)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, !text.contains(needle) {
            guard let count = child.readChunk(into: &chunk, waitingAtMost: 100) else { break }
            text += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        return text
    }

    /// SIGKILL: no shutdown code runs, as in a crash or an OOM kill.
    func kill9() {
        child.send(SIGKILL)
        child.waitForExit()
    }

    func terminate() {
        child.send(SIGTERM)
        child.waitForExit()
    }
}

enum ServerProcessError: Error {
    case didNotStart(String)
}

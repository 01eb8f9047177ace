import Foundation
import Glibc
import LockstepTestSupport

/// The `lockstep` executable started with extra environment variables, its stdout and stderr read together.
struct Launched: Sendable {
    let child: ChildProcess
    /// Everything it printed up to and including the line naming its port.
    let before: String
    var announcement: String {
        before.split(separator: "\n").first { $0.contains("/rooms/ROOM") }.map(String.init) ?? ""
    }

    var port: Int {
        guard let range = announcement.range(of: #":\d+/rooms/ROOM"#, options: .regularExpression) else { return 0 }
        return Int(announcement[range].dropFirst().prefix { $0.isNumber }) ?? 0
    }

    /// Runs a command that ends by itself: its exit status and everything it printed.
    static func run(
        _ arguments: [String], environment: [String: String]
    ) async throws -> (status: Int32, output: String) {
        try await offThePool {
            let child = try ChildProcess(
                executable: try builtExecutable("lockstep"), arguments: arguments, environment: environment,
                mergeErrors: true)
            let output = String(decoding: child.readToEnd(), as: UTF8.self)
            return (child.waitForExit(), output)
        }
    }

    /// Starts `lockstep serve` and waits for the line naming its port.
    static func serve(_ arguments: [String], environment: [String: String]) async throws -> Launched {
        try await offThePool {
            let child = try ChildProcess(
                executable: try builtExecutable("lockstep"), arguments: ["serve"] + arguments,
                environment: environment, mergeErrors: true)
            var text = ""
            var chunk = [UInt8](repeating: 0, count: 4_096)
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline, !text.contains("/rooms/ROOM\n"), let count = child.readChunk(into: &chunk) {
                text += String(decoding: chunk[0..<count], as: UTF8.self)
            }
            guard text.contains("/rooms/ROOM\n") else {
                child.send(SIGKILL)
                child.waitForExit()
                throw ServerProcessError.didNotStart(text)
            }
            return Launched(child: child, before: text)
        }
    }

    /// SIGTERM; the exit status.
    func stop() async -> Int32 {
        child.send(SIGTERM)
        return (try? await offThePool { child.waitForExit() }) ?? -1
    }

    /// What it printed after the port line, up to its exit.
    func rest() -> String {
        String(decoding: child.readToEnd(), as: UTF8.self)
    }
}

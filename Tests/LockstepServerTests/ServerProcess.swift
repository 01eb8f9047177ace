import Foundation
import Glibc
import LockstepTestSupport

/// A `lockstep serve` child process, for what only a real process shows: `kill -9`, signals, exit codes.
final class ServerProcess: Sendable {
    let child: ChildProcess
    let port: Int

    /// Starts the built `lockstep` binary and waits for the line that names its port.
    init(arguments: [String]) throws {
        child = try ChildProcess(
            executable: try builtExecutable("lockstep"), arguments: ["serve", "--port", "0"] + arguments)
        var text = ""
        var chunk = [UInt8](repeating: 0, count: 4_096)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !text.contains("/rooms/ROOM"), let count = child.readChunk(into: &chunk) {
            text += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        guard let range = text.range(of: #"127\.0\.0\.1:(\d+)/"#, options: .regularExpression),
            let port = Int(text[range].dropFirst("127.0.0.1:".count).dropLast())
        else {
            child.send(SIGTERM)
            child.waitForExit()
            throw ServerProcessError.didNotStart(text)
        }
        self.port = port
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

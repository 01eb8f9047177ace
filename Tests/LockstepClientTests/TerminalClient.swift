import Foundation
import LockstepTestSupport
import Synchronization

/// A `lockstep-client` on a pseudo-terminal, as a person runs it: keys typed into it, its screen read back (without
/// colours). Each redraw starts at the top left, so the last one is what the screen shows now.
final class TerminalClient: Sendable {
    let child: ChildProcess
    private let output = Mutex<[UInt8]>([])
    private let quitting = Mutex(false)

    init(arguments: [String], rows: Int = 24, columns: Int = 100) throws {
        let child = try ChildProcess(
            executable: try builtExecutable("lockstep-client"), arguments: arguments,
            environment: ["NO_COLOR": "1", "TERM": "xterm"], terminal: (rows, columns))
        self.child = child
        Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while let count = child.readChunk(into: &chunk) {
                output.withLock { $0 += chunk[0..<count] }
            }
        }.start()
    }

    /// Types `text` (control characters included: `\r` is Enter, `\u{7F}` Backspace, `\u{3}` Ctrl-C).
    func type(_ text: String) {
        child.write(Array(text.utf8))
    }

    /// The text of the latest full redraw.
    var lastFrame: String {
        let text = output.withLock { String(decoding: $0, as: UTF8.self) }
        return text.components(separatedBy: "\u{1B}[H").last ?? ""
    }

    /// Quits as a person does (Ctrl-C) and returns the exit status.
    func quit() async throws -> Int32 {
        quitting.withLock { $0 = true }
        type("\u{3}")
        return try await within(30, "lockstep-client to quit") { try await offThePool { self.child.waitForExit() } }
    }

    /// Ends the client if the test failed before it quit.
    func end() {
        guard !quitting.withLock({ $0 }) else { return }
        child.send(SIGTERM)
        child.waitForExit()
    }
}

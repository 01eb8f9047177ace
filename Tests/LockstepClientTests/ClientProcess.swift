import Foundation
import LockstepJSON
import LockstepTestSupport

/// A running `lockstep-client` whose stdout is read line by line as JSON.
final class ClientProcess: Sendable {
    let child: ChildProcess
    let lines: AsyncStream<JSON>

    init(arguments: [String]) throws {
        let child = try ChildProcess(
            executable: try builtExecutable("lockstep-client"), arguments: arguments, pipeInput: true)
        self.child = child
        let (stream, continuation) = AsyncStream.makeStream(of: JSON.self)
        lines = stream
        Thread {
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while let count = child.readChunk(into: &chunk) {
                buffer += chunk[0..<count]
                while let newline = buffer.firstIndex(of: 10) {
                    if let json = try? JSON(parsing: Array(buffer[..<newline])) { continuation.yield(json) }
                    buffer.removeSubrange(...newline)
                }
            }
            continuation.finish()
        }.start()
    }
}

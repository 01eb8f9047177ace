import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One generator process of a run with `processes` N: this same executable, started with the plan's
/// `workerArguments` for I, which opens its share of the clients and talks to the coordinating process in lines: it
/// writes `ready`, its highest acked version, its acked versions and its tally on stdout, and reads the start time,
/// everyone's highest acked version and everyone's acked versions on stdin. Its stderr is the coordinator's, so its
/// errors are seen. Started with `posix_spawn` rather than Foundation's `Process`, which on Linux reads
/// `/proc/self/fd` past its buffer in a process holding thousands of sockets (see
/// Tests/LockstepTestSupport/ChildProcess.swift).
final class LoadWorker {
    let index: Int
    private let pid: pid_t
    private let input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []

    /// Starts `/proc/self/exe` with `arguments`, which make it run worker `index`.
    init(index: Int, arguments: [String]) throws(LoadError) {
        self.index = index
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
            throw .transport("cannot make a pipe for generator process \(index): \(String(cString: strerror(errno)))")
        }
        for descriptor in [toChild[1], fromChild[0]] { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var child = pid_t()
        let result = posix_spawn(&child, executable, &actions, nil, argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard result == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw .transport("cannot start generator process \(index): \(String(cString: strerror(result)))")
        }
        pid = child
        input = toChild[1]
        output = fromChild[0]
    }

    deinit {
        close(input)
        close(output)
        var status: Int32 = 0
        kill(pid, SIGTERM)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// Writes one line to the worker's stdin.
    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
            written += count
        }
    }

    /// Reads the worker's next line and checks that it starts with `word`; returns the rest of it.
    func receive(_ word: String) throws(LoadError) -> String {
        while true {
            if let end = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 1)
                guard line.hasPrefix(word) else {
                    throw .transport("generator process \(index) said '\(line.prefix(80))', expected \(word)")
                }
                return String(line.dropFirst(word.count).drop { $0 == " " })
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .transport("generator process \(index) ended early (see its message above)") }
            buffer += chunk[0..<count]
        }
    }

    /// Reads the worker's next line, which starts with `word`, and decodes the rest as JSON.
    func receive<Value: Decodable>(_ word: String, as type: Value.Type) throws(LoadError) -> Value {
        try LoadRun.decode(Value.self, receive(word))
    }
}

import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for what only a real process shows (`kill -9`, exit codes, a CLI
/// driven through its stdin and stdout). Its stderr goes to /dev/null (or with its stdout); no other descriptor of the
/// tests is inherited.
///
/// Foundation's `Process` is not used: on Linux it lists `/proc/self/fd` by copying each entry's whole 256-byte name
/// field, which can read past the end of the directory buffer, and it crashed test runs in which other tests held
/// a thousand sockets open.
public final class ChildProcess: Sendable {
    /// The child's process id.
    public let pid: Int32
    /// The read end of the child's stdout.
    public let output: Int32
    private let input: Mutex<Int32>
    private let status = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`; with `pipeInput`, the child's stdin is a pipe written by `write`. The
    /// child inherits this process's environment with `environment` set over it; with `mergeErrors` its stderr goes to
    /// the same pipe as its stdout. With `terminal` its stdin and stdout are a pseudo-terminal of that many rows and
    /// columns instead (what a full-screen program needs): `write` types into it and the output is what it draws.
    public init(
        executable: String, arguments: [String], pipeInput: Bool = false, environment: [String: String] = [:],
        mergeErrors: Bool = false, terminal: (rows: Int, columns: Int)? = nil
    ) throws(ChildProcessError) {
        var outputPipe: [Int32] = [-1, -1]
        var inputPipe: [Int32] = [-1, -1]
        // One spawn at a time: a child spawned by another thread between pipe() and FD_CLOEXEC would inherit this
        // child's write end, and this child's end of output would never be seen.
        spawnLock.lock()
        defer { spawnLock.unlock() }
        if let terminal {
            // The terminal's side is the child's stdin and stdout; ours reads what it draws and writes its keys.
            let pair = try Self.openPseudoTerminal(rows: terminal.rows, columns: terminal.columns)
            outputPipe = [pair.controller, pair.terminal]
            inputPipe = [pair.terminal, dup(pair.controller)]
        } else {
            guard pipe(&outputPipe) == 0 else { throw .spawn(errno) }
            if pipeInput, pipe(&inputPipe) != 0 { throw .spawn(errno) }
        }
        let pipeInput = pipeInput || terminal != nil
        for descriptor in outputPipe + inputPipe where descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if pipeInput {
            posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        if mergeErrors {
            posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // Every other open descriptor is closed explicitly.
        for descriptor in Self.openDescriptors() where descriptor > 2 && !outputPipe.contains(descriptor)
            && !inputPipe.contains(descriptor)
        {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { $1 }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in envp { free(variable) } }
        var child = pid_t()
        let result = posix_spawn(&child, executable, &actions, nil, argv, envp)
        close(outputPipe[1])
        if pipeInput, inputPipe[0] != outputPipe[1] { close(inputPipe[0]) }
        guard result == 0 else {
            close(outputPipe[0])
            if pipeInput { close(inputPipe[1]) }
            throw .spawn(result)
        }
        pid = child
        output = outputPipe[0]
        input = Mutex(pipeInput ? inputPipe[1] : -1)
    }

    deinit {
        close(output)
        closeInput()
    }

    /// Writes all of `bytes` to the child's stdin.
    public func write(_ bytes: [UInt8]) {
        input.withLock { descriptor in
            var written = 0
            while descriptor >= 0, written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                written += count
            }
        }
    }

    /// Ends the child's stdin (it reads end of file).
    public func closeInput() {
        input.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    /// Reads the child's stdout until it closes it.
    public func readToEnd() -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while let count = readChunk(into: &chunk) { bytes += chunk[0..<count] }
        return bytes
    }

    /// One read from the child's stdout; nil at end of file.
    public func readChunk(into buffer: inout [UInt8]) -> Int? {
        while true {
            let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            return count > 0 ? count : nil
        }
    }

    /// One read from the child's stdout, waiting at most `milliseconds`; nil at end of file, 0 when nothing came.
    public func readChunk(into buffer: inout [UInt8], waitingAtMost milliseconds: Int32) -> Int? {
        var entry = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, milliseconds) > 0 else { return 0 }
        return readChunk(into: &buffer)
    }

    /// Runs `executable` to its end, off the task pool, and returns what it wrote to stdout.
    public static func output(of executable: String, _ arguments: [String]) async throws -> String {
        try await offThePool {
            let child = try ChildProcess(executable: executable, arguments: arguments)
            let output = child.readToEnd()
            child.waitForExit()
            return String(decoding: output, as: UTF8.self)
        }
    }

    /// Sends `signal` to the child.
    public func send(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Waits for the child to end; its exit code, or 128 plus the signal that ended it.
    @discardableResult
    public func waitForExit() -> Int32 {
        status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            let code = Self.exitCode(raw)
            status = code
            return code
        }
    }

    /// The child's exit code as ``waitForExit()`` gives it once it has ended; nil while it runs. Does not block.
    public var exitCode: Int32? {
        status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            status = Self.exitCode(raw)
            return status
        }
    }

    /// The exit code in a status from `waitpid`: 128 plus the signal when a signal ended the child.
    private static func exitCode(_ raw: Int32) -> Int32 {
        raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
    }

    /// A new pseudo-terminal of `rows` by `columns`: the controlling side (kept here) and the terminal's side (the
    /// child's), both close-on-exec.
    private static func openPseudoTerminal(
        rows: Int, columns: Int
    ) throws(ChildProcessError) -> (controller: Int32, terminal: Int32) {
        // Linux's pseudo-terminal multiplexer, unlocked and numbered by ioctl (TIOCSPTLCK, TIOCGPTN), as glibc's
        // unlockpt and ptsname do.
        let controller = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard controller >= 0 else { throw .spawn(errno) }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(controller, 0x4004_5431, &unlock) == 0, ioctl(controller, 0x8004_5430, &number) == 0 else {
            let failure = errno
            close(controller)
            throw .spawn(failure)
        }
        let name = "/dev/pts/\(number)"
        let terminal = open(name, O_RDWR | O_NOCTTY)
        guard terminal >= 0 else {
            close(controller)
            throw .spawn(errno)
        }
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(controller, UInt(TIOCSWINSZ), &size)
        return (controller, terminal)
    }

    /// The descriptors open in this process, read from `/proc/self/fd` without copying past each name.
    private static func openDescriptors() -> [Int32] {
        guard let directory = opendir("/proc/self/fd") else { return Array(3..<1024) }
        defer { closedir(directory) }
        var descriptors: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if let descriptor = Int32(name) { descriptors.append(descriptor) }
        }
        return descriptors
    }
}

private let spawnLock = NSLock()

/// Why a child process could not be started.
public enum ChildProcessError: Error {
    /// `posix_spawn` or `pipe` failed with this errno.
    case spawn(Int32)
    /// The executable is not in the build directory (`swift build --product NAME`).
    case notBuilt(String)
    /// A helper command ran but did not do its job; the text says which and how.
    case failed(String)
}

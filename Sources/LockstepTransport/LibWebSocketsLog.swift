internal import CLibWebSockets
import Synchronization
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Where libwebsockets' own log lines go: to stderr as before, except an `accept` that failed for want of
/// descriptors (`EMFILE`, `ENFILE`). libwebsockets only logs that and returns, once per turn of a loop that then spins;
/// the failure is recorded instead for the loop thread that made the call, whose server says so in its own words and
/// acts on it (see `DescriptorReserve`).
enum LibWebSocketsLog {
    /// The errno of an unreported accept failure, by the loop thread that hit it.
    private static let acceptFailures = Mutex<[UInt: Int32]>([:])
    /// How many entries `acceptFailures` holds: lets every loop turn skip the lock when there is none.
    private static let pending = Atomic<Int>(0)

    /// Sends libwebsockets' errors (and, with `warnings`, its warnings) here. Any thread.
    static func install(warnings: Bool) {
        CLibWebSockets_set_log_level(warnings ? 1 : 0, emitLibWebSocketsLine)
    }

    /// The errno of the accept that failed for want of descriptors on this thread since the last call, if any.
    static func takeAcceptFailure() -> Int32? {
        guard pending.load(ordering: .relaxed) > 0 else { return nil }
        return acceptFailures.withLock { failures in
            guard let failure = failures.removeValue(forKey: currentThreadID()) else { return nil }
            pending.subtract(1, ordering: .relaxed)
            return failure
        }
    }

    fileprivate static func receive(level: Int32, line: UnsafePointer<CChar>) {
        let prefix = "accept: errno "
        let text = String(cString: line)
        if text.hasPrefix(prefix),
            let code = Int32(text.dropFirst(prefix.count).prefix { $0.isNumber }),
            code == EMFILE || code == ENFILE
        {
            acceptFailures.withLock { failures in
                if failures.updateValue(code, forKey: currentThreadID()) == nil { pending.add(1, ordering: .relaxed) }
            }
            return
        }
        lwsl_emit_stderr(level, line)
    }
}

private let emitLibWebSocketsLine: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { level, line in
    guard let line else { return }
    LibWebSocketsLog.receive(level: level, line: line)
}

import Foundation
import Synchronization

/// A thread of the log's own, running its database work one job at a time.
///
/// Not a dispatch queue: on Linux those share their threads with Swift's task pool, so an embedding program whose
/// tasks block that pool would hold every write, and so every acknowledgement, back. A continuation resumed from here
/// goes straight to the server's loop.
final class LogThread: Sendable {
    private struct Jobs {
        var queued: [@Sendable () -> Void] = []
        var stopped = false
    }

    private let jobs = Mutex(Jobs())
    private let ready = DispatchSemaphore(value: 0)

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Runs `job` on the thread after every job queued before it; does nothing once stopped.
    func async(_ job: @escaping @Sendable () -> Void) {
        let queued = jobs.withLock { jobs in
            guard !jobs.stopped else { return false }
            jobs.queued.append(job)
            return true
        }
        if queued { ready.signal() }
    }

    /// Runs `job` after every job queued before it, waits for it, and stops the thread.
    func stop(after job: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        async {
            job()
            done.signal()
        }
        jobs.withLock { $0.stopped = true }
        ready.signal()
        done.wait()
    }

    private func run() {
        while true {
            ready.wait()
            let (work, stopped) = jobs.withLock { jobs in
                defer { jobs.queued.removeAll() }
                return (jobs.queued, jobs.stopped)
            }
            for job in work { job() }
            if stopped, jobs.withLock({ $0.queued.isEmpty }) { return }
        }
    }
}

import Dispatch
import Foundation
import LockstepTransport
import Synchronization

/// The one thread of `--scenario http`'s writers: it looks at the sockets of the writers with a request in flight
/// (`SocketReadiness`, so that a pass costs the sockets ready, not every writer's) and sends each writer's next
/// request as soon as its answer is read.
///
/// While requests are in flight it does not sleep but yields: a thread asleep in a wait is woken by each answer, and
/// on loopback the kernel charges that wake-up to the sender, the server, whose cost per request is what the scenario
/// measures (on another machine a client's wake-up costs the server nothing). The thread takes a core meanwhile.
// @unchecked Sendable: `writers` and `readiness` are used by the loop's thread alone from `start(at:)` until `finished`
// is signalled.
final class LoadHTTPLoop: @unchecked Sendable {
    let writers: [LoadHTTPWriter]
    private let readiness: SocketReadiness
    /// Per writer: the connection watched (`LoadHTTPWriter.connections` when it was) and whether for output.
    private var watched: [(connection: Int, output: Bool)]
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)
    /// How often every writer is looked at: a request to send after an error, a timeout, the end of the run.
    private static let sweepNanos: UInt64 = 10_000_000

    init(writers: [LoadHTTPWriter]) throws(LoadError) {
        self.writers = writers
        do {
            readiness = try SocketReadiness(batch: writers.count)
        } catch {
            throw .transport(error.message)
        }
        watched = Array(repeating: (0, false), count: writers.count)
    }

    /// Starts the thread, which sends every writer's first request at `start` (a `LoadClock` time).
    func start(at start: UInt64) {
        Thread.detachNewThread { [self] in
            LoadClock.sleep(until: start)
            run()
            for writer in writers { writer.closeSocket() }
            finished.signal()
        }
    }

    /// Lets the requests in flight finish and sends no more.
    func stop() {
        running.store(false, ordering: .relaxed)
    }

    /// Waits for the thread to end: at most the request timeout after `stop()`.
    func waitUntilFinished() {
        finished.wait()
    }

    private func run() {
        var lastSweep: UInt64 = 0
        while true {
            let now = LoadClock.now()
            let sending = running.load(ordering: .relaxed)
            if now - lastSweep >= Self.sweepNanos {
                lastSweep = now
                for position in writers.indices {
                    if sending { writers[position].postNext(now: now) }
                    writers[position].checkTimeout(now: now)
                    watch(position)
                }
                // Nothing in flight: every writer gave up, or the run is over.
                if !writers.contains(where: \.isWaiting) { return }
            }
            let ready = readiness.wait(milliseconds: 0) { tag, readable, writable in
                let position = Int(tag)
                let writer = writers[position]
                if writable { writer.sendMore() }
                if writer.isWaiting, readable { writer.receive() }
                if sending { writer.postNext(now: LoadClock.now()) }
                watch(position)
            }
            if ready == 0 { _ = sched_yield() }
        }
    }

    /// Watches a writer's new connection (closing a socket ended the old one's watch), or changes what it waits for.
    private func watch(_ position: Int) {
        let writer = writers[position]
        guard writer.connection >= 0 else { return }
        let wanted = (connection: writer.connections, output: writer.isSending)
        let current = watched[position]
        guard current != wanted else { return }
        readiness.watch(
            writer.connection, tag: UInt32(position), output: wanted.output,
            again: current.connection == wanted.connection)
        watched[position] = wanted
    }
}

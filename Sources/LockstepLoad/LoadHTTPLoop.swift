import Dispatch
import Foundation
import LockstepTransport
import Synchronization

/// The one thread of `--scenario http`'s writers: it waits on the sockets of the writers with a request in flight
/// (`SocketReadiness`, so that a pass costs the sockets ready, not every writer's) and sends each writer's next
/// request as soon as its answer is read, as a WebSocket shard's loop serves its clients.
// @unchecked Sendable: `writers` and `readiness` are used by the loop's thread alone from `start(at:)` until `finished`
// is signalled.
final class LoadHTTPLoop: @unchecked Sendable {
    let writers: [LoadHTTPWriter]
    private let readiness: SocketReadiness
    /// Per writer: the connection watched (`LoadHTTPWriter.connections` when it was) and whether for output.
    private var watched: [(connection: Int, output: Bool)]
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)
    /// Longest wait for a socket, so that timeouts and `stop()` are seen while no answer comes.
    private static let waitMilliseconds: Int32 = 50
    /// How often every writer is looked at: a request to send after an error, a timeout, the end of the run.
    private static let sweepNanos: UInt64 = 10_000_000

    /// After a pass that served sockets, how long to let more answers come before the next (`LoadPlan.collectInterval`).
    private let collectNanos: UInt64

    init(writers: [LoadHTTPWriter], collectInterval: Duration) throws(LoadError) {
        self.writers = writers
        collectNanos = collectInterval.nanoseconds
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
            let serve = { (tag: UInt32, readable: Bool, writable: Bool) in
                let position = Int(tag)
                let writer = self.writers[position]
                if writable { writer.sendMore() }
                if writer.isWaiting, readable { writer.receive() }
                if sending { writer.postNext(now: LoadClock.now()) }
                self.watch(position)
            }
            // A thread asleep in the wait is woken by each answer, and on loopback the kernel charges that to the
            // server that sends it: after a pass with answers, more are let come first, as the WebSocket clients'
            // loops do with `--event-loop epoll`.
            if readiness.wait(milliseconds: 0, serve) == 0 {
                readiness.wait(milliseconds: Self.waitMilliseconds, serve)
            } else if collectNanos > 0 {
                LoadClock.sleep(until: LoadClock.now() + collectNanos)
            }
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

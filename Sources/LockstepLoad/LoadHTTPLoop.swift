import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one thread of `--scenario http`'s writers: it polls the sockets of the writers with a request in flight and
/// sends each writer's next request as soon as its answer is read, so a pass serves every writer whose answer came,
/// as a WebSocket shard's loop serves its clients.
// @unchecked Sendable: `writers` are used by the loop's thread alone from `start(at:)` until `finished` is signalled.
final class LoadHTTPLoop: @unchecked Sendable {
    let writers: [LoadHTTPWriter]
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)
    /// Longest wait in `poll`, so that timeouts and `stop()` are seen while no answer comes.
    private static let pollMilliseconds: Int32 = 50

    init(writers: [LoadHTTPWriter]) {
        self.writers = writers
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
        var descriptors: [pollfd] = []
        var polled: [LoadHTTPWriter] = []
        while true {
            let now = LoadClock.now()
            let sending = running.load(ordering: .relaxed)
            descriptors.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            for writer in writers {
                if sending { writer.postNext(now: now) }
                writer.checkTimeout(now: now)
                guard writer.isWaiting else { continue }
                let events = Int16(POLLIN) | (writer.isSending ? Int16(POLLOUT) : 0)
                descriptors.append(pollfd(fd: writer.connection, events: events, revents: 0))
                polled.append(writer)
            }
            // Nothing in flight: every writer gave up, or the run is over.
            if descriptors.isEmpty { return }
            guard poll(&descriptors, nfds_t(descriptors.count), Self.pollMilliseconds) > 0 else { continue }
            for (descriptor, writer) in zip(descriptors, polled) where descriptor.revents != 0 {
                if descriptor.revents & Int16(POLLOUT) != 0 { writer.sendMore() }
                if writer.isWaiting, descriptor.revents & ~Int16(POLLOUT) != 0 { writer.receive() }
            }
        }
    }
}

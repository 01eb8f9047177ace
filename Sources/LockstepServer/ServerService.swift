import Foundation
import ServiceLifecycle

/// The running server as a swift-service-lifecycle service: it serves until the group's graceful shutdown (SIGTERM,
/// SIGINT), then drains (``SyncServer/drain()``: 503 to health checks and handshakes, what was read answered and
/// stored, 1001 to every client) and stops, so the process exits 0 within `--drain-timeout`. ``SyncServer/run()``
/// runs it.
struct ServerService: Service {
    let server: SyncServer
    /// The line naming the port, printed once the group catches signals: a SIGTERM sent as soon as a script reads it
    /// drains the server rather than killing it.
    let announcement: String?

    func run() async throws {
        // Unbuffered, so scripts reading the port see it at once.
        if let announcement { FileHandle.standardOutput.write(Data(announcement.utf8)) }
        do {
            try await gracefulShutdown()
            await server.drain()
        } catch {
            // Cancelled (the group is cancelled, not shut down gracefully): no drain, just stop.
        }
        await stop()
    }

    /// `shutdown()` waits for the loop thread to end: on a thread of its own, not one of the task pool's.
    private func stop() async {
        let server = server
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                server.shutdown()
                continuation.resume()
            }
        }
    }
}

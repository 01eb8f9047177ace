import Logging
import LockstepTransport

/// A server that leaves (SIGTERM) drains instead of dropping its clients: readiness goes off at once, every request
/// already read is answered once what it changed is stored, and each client is told to go elsewhere (close 1001), all
/// within `drainTimeout`. Clients with a session then resume on another server and lose or repeat nothing.
extension SyncServer {
    /// The close code that tells a client this server is going away and it should reconnect now.
    static let goingAway: UInt16 = 1001
    /// What health checks, refused handshakes and closed connections are told during a drain.
    static let drainingNotice = "this server is shutting down; reconnect to another"
    /// How often a drain looks whether what it waits for is done.
    private static let drainPoll = Duration.milliseconds(10)

    /// Drains the server; returns once every client is gone, or when `configuration.drainTimeout` has passed. Call
    /// ``shutdown()`` afterwards. A second call while one runs returns at once.
    ///
    /// 1. `GET /healthz` and new handshakes get 503 from now on, and no client is read from any more.
    /// 2. Every request already read is answered (ack or error); acks leave only once their change is stored.
    /// 3. Every connection gets what was queued for it, then a close frame with code 1001; every follower of a room's
    ///    changes (`/log?follow=true`) gets what was queued for it, then the last chunk of its response.
    ///
    /// Steps 1-2 may take all but a tenth of the timeout (at most a second is kept for the close frames to leave).
    public func drain() async {
        guard beginDrain() else { return }
        let timeout = configuration.drainTimeout
        let deadline = ContinuousClock.now + timeout
        let closing = deadline - min(timeout / 10, .seconds(1))
        logger.notice(
            "draining", metadata: ["connections": "\(transport.connectionCount)", "timeout": "\(timeout)"])
        for session in allSessions { session.connection.pauseReceiving() }

        let settled = await wait(until: closing) { isSettled }
        finishFollowers()
        finishListeners()
        for session in allSessions { session.connection.close(code: Self.goingAway, reason: Self.drainingNotice) }
        _ = await wait(until: deadline) { transport.connectionCount == 0 && !hasFollowers }
        let left = transport.connectionCount
        let level: Logger.Level = settled && left == 0 ? .notice : .warning
        logger.log(
            level: level, "drained",
            metadata: [
                "answered": "\(settled ? "all" : "not all: the drain timeout passed first")",
                "connectionsLeft": "\(left)",
            ])
    }

    /// Waits until `done` holds, `deadline` passes or the task is cancelled; returns whether `done` holds.
    private func wait(until deadline: ContinuousClock.Instant, for done: () -> Bool) async -> Bool {
        while !done(), ContinuousClock.now < deadline {
            do { try await Task.sleep(for: Self.drainPoll) } catch { break }
        }
        return done()
    }

    /// Every request read has its answer queued on its connection, nothing waits to be stored.
    private var isSettled: Bool { requestsBeingRead == 0 && pipeline.isSettled }

    private var allSessions: [Session] { rooms.values.flatMap(\.sessions) }
}

import LockstepStorage
import PostgresNIO
import Synchronization

/// The notices of commits, and the listening connection: one per server, outside the pool, `LISTEN`ing on
/// ``PostgresRoomStorage/channel``.
extension PostgresRoomStorage {
    /// Announces `room`'s commit up to `version` to the other servers, with those of every room committed meanwhile.
    func announce(room: String, version: Int) {
        guard notices.add(room: room, version: version) else { return }
        Task { [self] in await sendNotices() }
    }

    /// Sends what waits until nothing does, one statement at a time; a statement that fails is sent again (backing off
    /// from 100 ms to 2 s) until the storage closes.
    private func sendNotices() async {
        var delay = Duration.milliseconds(100)
        while true {
            let waiting = notices.take()
            if waiting.isEmpty { return }
            let payloads = waiting.map { Notice(.committed(room: $0.key, version: $0.value), node: node).payload }
            do throws(StorageError) {
                try await bounded("announce commits") { [self] in
                    try await client.withConnection { connection in
                        let notify = Statements.Notify(channel: Self.channel, payloads: payloads)
                        for try await _ in try await connection.execute(notify, logger: logger) {}
                    }
                }
                delay = .milliseconds(100)
            } catch {
                guard !closed.load(ordering: .acquiring) else { return notices.stop() }
                logger.warning("cannot announce commits to other servers yet", metadata: ["error": "\(error)"])
                notices.putBack(waiting)
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }

    /// Starts the listening task; returns once its first `LISTEN` is in place, so no later notification is missed.
    ///
    /// When the connection is lost, the task reconnects (backing off from 100 ms to 2 s), listens again and yields
    /// ``StorageEvent/resynchronise``, since announcements may have been missed meanwhile.
    func startListening() async throws(StorageError) {
        let (ready, readiness) = AsyncThrowingStream.makeStream(of: Void.self)
        let task = Task { [self] in
            var listened = false
            var delay = Duration.milliseconds(100)
            while !Task.isCancelled {
                do {
                    try await listenOnce {
                        if listened {
                            logger.info("listening for other servers again")
                            continuation.yield(.resynchronise)
                        }
                        listened = true
                        delay = .milliseconds(100)
                        readiness.yield()
                    }
                } catch {
                    logger.debug("the listening connection ended", metadata: ["error": "\(String(reflecting: error))"])
                    if !listened {
                        readiness.finish(throwing: error)
                        return
                    }
                }
                if Task.isCancelled { break }
                logger.warning("no PostgreSQL connection listening for other servers; reconnecting")
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
        tasks.withLock { $0.append(task) }
        try await bounded("listen for other servers") {
            for try await _ in ready { return }
        }
    }

    /// Connects, listens, calls `listening`, then yields each notice of another node until the connection ends.
    private func listenOnce(_ listening: () -> Void) async throws {
        // Bounded by the configuration's connect timeout.
        let connection = try await PostgresConnection.connect(
            configuration: connectionConfiguration, id: 0, logger: logger)
        do {
            try await withTaskCancellationHandler {
                try await connection.listen(on: Self.channel) { notifications in
                    listening()
                    for try await notification in notifications {
                        guard let notice = Notice(payload: notification.payload) else {
                            logger.debug("ignored a notification", metadata: ["payload": "\(notification.payload)"])
                            continue
                        }
                        if notice.node != node { continuation.yield(notice.event) }
                    }
                }
            } onCancel: {
                _ = connection.close() as EventLoopFuture<Void>
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }
}

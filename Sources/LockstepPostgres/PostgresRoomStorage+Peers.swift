public import LockstepCore
import LockstepJSON
public import LockstepStorage
import PostgresNIO
import Synchronization

/// Presence across servers: each server keeps one row per room listing its clients, each with its presence state
/// where it has one, renewed while it runs; every publication tells the other servers with a notice.
extension PostgresRoomStorage {
    public func publish(peers: [Peer], room: String) async throws(StorageError) {
        let lifetime = Self.interval(configuration.peerLifetime)
        try await bounded("publish the peers of room \(room)") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                if peers.isEmpty {
                    try await connection.query(
                        "DELETE FROM peers WHERE node = \(node) AND room = \(room)", logger: logger)
                } else {
                    let list = ByteBuffer(bytes: JSON.array(peers.map(\.json)).serialized())
                    try await connection.query(
                        """
                        INSERT INTO peers (node, room, peers, expires)
                        VALUES (\(node), \(room), \(list), now() + \(lifetime)::interval)
                        ON CONFLICT (node, room) DO UPDATE SET peers = excluded.peers, expires = excluded.expires
                        """, logger: logger)
                }
                try await notify(.peersChanged(room: room), connection)
            }
        }
    }

    public func remotePeers(room: String) async throws(StorageError) -> [Peer] {
        let lists = try await bounded("read the peers of room \(room)") { [self] in
            var lists: [ByteBuffer] = []
            for list in try await client.rows(
                """
                SELECT peers FROM peers WHERE room = \(room) AND node <> \(node) AND expires > now() ORDER BY node
                """, decoding: ByteBuffer.self, logger: logger)
            {
                lists.append(list)
            }
            return lists
        }
        return lists.flatMap { list -> [Peer] in
            guard case .array(let entries)? = try? JSON(parsing: list.bytes) else { return [] }
            return entries.compactMap(Peer.init(json:))
        }
    }

    /// Pushes back the expiry of this server's rows every third of ``peerLifetime``, so they outlive a missed renewal.
    func startRenewingPeers() {
        let lifetime = Self.interval(configuration.peerLifetime)
        let period = configuration.peerLifetime / 3
        let task = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: period)
                do throws(StorageError) {
                    _ = try await bounded("renew the peers") { [self] in
                        try await client.query(
                            "UPDATE peers SET expires = now() + \(lifetime)::interval WHERE node = \(node)",
                            logger: logger)
                    }
                } catch {
                    logger.warning("cannot renew this server's peers", metadata: ["error": "\(error)"])
                }
            }
        }
        tasks.withLock { $0.append(task) }
    }

    /// `duration` as a PostgreSQL interval literal, in milliseconds.
    private static func interval(_ duration: Duration) -> String { "\(Int(duration / .milliseconds(1))) milliseconds" }
}

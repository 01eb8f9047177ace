public import LockstepStorage
import PostgresNIO

/// A room's state migrated by a server to the app's newer state version, written back so it migrates once.
extension PostgresRoomStorage {
    public func storeMigration(_ snapshot: StoredSnapshot, epoch: String) async throws(StorageError) {
        let room = snapshot.room
        try await bounded("store the migration of room \(room)") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                // The room's lock, as in a write: no other server commits to it meanwhile.
                for stored in try await connection.rows(
                    "SELECT version FROM rooms WHERE room = \(room) FOR UPDATE", decoding: Int.self, logger: logger)
                where stored > snapshot.version {
                    throw StorageError.database(
                        "room \(room) moved past version \(snapshot.version) while it was migrated; read it again")
                }
                let sessions = SessionWrites(idleSeconds: .infinity, limit: .max)
                try await store(
                    RoomWrite(changes: [], snapshots: [snapshot], sessions: sessions), keepHistory: 0, connection)
                try await connection.query(
                    "UPDATE rooms SET epoch = \(epoch) WHERE room = \(room)", logger: logger)
            }
        }
    }
}

@testable import LockstepPostgres
import LockstepCore
import LockstepStorage
import LockstepTestSupport
import Synchronization
import Testing

extension PostgresTests {
    /// Two storages on one database, as two servers: locked writes, events, peers, a database that goes away.
    @Suite struct PostgresSharingTests {
        /// What one server holds of a room in these tests: its version and every change it applied, in order.
        final class Replica: Sendable {
            let name: String
            let state = Mutex<(version: Int, applied: [StoredChange], missed: [StoredChange])>((0, [], []))

            init(_ name: String) { self.name = name }

            var version: Int { state.withLock { $0.version } }

            /// Applies what other writers committed, then adds one change of its own.
            func prepare(_ room: String, _ text: String) -> @Sendable ([StoredChange]) async -> RoomWrite {
                { missed in
                    self.state.withLock { state in
                        // Changes of this replica's earlier writes come back when they raced; they are known already.
                        for change in missed where change.version > state.version {
                            precondition(change.version == state.version + 1, "missed changes are contiguous")
                            state.version = change.version
                            state.applied.append(change)
                            state.missed.append(change)
                        }
                        let own = change(room, state.version + 1, text)
                        state.version += 1
                        state.applied.append(own)
                        return RoomWrite(changes: [own], snapshots: [], sessions: SessionWrites(idleSeconds: 60, limit: 10))
                    }
                }
            }
        }

        @Test func writersOnTwoServersCommitOneContiguousOrder() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let a = try await openStorage(server)
            defer { a.close() }
            let b = try await openStorage(server)
            defer { b.close() }
            let replicas = [(a, Replica("a")), (b, Replica("b"))]
            let writesEach = 20
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (storage, replica) in replicas {
                    // A few writers per server, each writing in turn (a server writes a room once at a time; several
                    // here make the same server's writes race too).
                    for writer in 0..<4 {
                        group.addTask {
                            for index in stride(from: writer, to: writesEach, by: 4) {
                                try await storage.write(
                                    room: "r", after: replica.version,
                                    prepare: replica.prepare("r", "\(replica.name)\(index)"))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let stored = try await a.changes(room: "r", after: 0)
            #expect(stored.map(\.version) == Array(1...(2 * writesEach)))
            /// The text a replica wrote into a message: its name and the index of the write.
            func text(_ change: StoredChange) -> Substring {
                String(decoding: change.message, as: UTF8.self).drop { $0.isNumber || $0 == "m" }
            }
            #expect(Set(stored.map(text)).count == 2 * writesEach)
            for (storage, replica) in replicas {
                let (applied, missed) = replica.state.withLock { ($0.applied, $0.missed) }
                // Every replica applied the stored log in order (but for what the other wrote after its last write), and
                // what it missed is exactly what the other one wrote.
                let tail = try await storage.changes(room: "r", after: replica.version)
                #expect(applied + tail == stored)
                #expect((missed + tail).allSatisfy { !text($0).hasPrefix(replica.name) })
                #expect(missed.count + tail.count == writesEach)
            }
            #expect(try server.sql("SELECT version FROM rooms WHERE room = 'r'") == "\(2 * writesEach)")
        }

        @Test func aRoomsFailedWriteLeavesOtherRoomsAlone() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let storage = try await openStorage(server)
            defer { storage.close() }
            let good = Replica("good")
            async let goodWrites: Void = {
                for index in 0..<5 { try await storage.write(room: "good", after: good.version, prepare: good.prepare("good", "\(index)")) }
            }()
            await #expect(throws: StorageError.self) {
                try await storage.write(room: "bad", after: 0) { _ in
                    RoomWrite(changes: [change("bad", 1), change("bad", 3)], snapshots: [], sessions: SessionWrites(idleSeconds: 60, limit: 10))
                }
            }
            try await goodWrites
            #expect(storage.isAvailable)
            #expect(try await storage.changes(room: "bad", after: 0) == [])
            #expect(try await storage.changes(room: "good", after: 0).map(\.version) == [1, 2, 3, 4, 5])
            let bad = Replica("bad")
            try await storage.write(room: "bad", after: 0, prepare: bad.prepare("bad", ""))
            #expect(try await storage.changes(room: "bad", after: 0).map(\.version) == [1])
        }

        @Test func commitsOfOneServerAreHeardByTheOther() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let a = try await openStorage(server)
            defer { a.close() }
            let b = try await openStorage(server)
            defer { b.close() }
            let heardByA = EventCollector(a)
            let heardByB = EventCollector(b)
            let replicaA = Replica("a")
            let replicaB = Replica("b")
            try await a.write(room: "room one", after: 0, prepare: replicaA.prepare("room one", ""))
            #expect(await heardByB.contains(.committed(room: "room one", version: 1)))
            try await b.write(room: "room one", after: 0, prepare: replicaB.prepare("room one", ""))
            #expect(await heardByA.contains(.committed(room: "room one", version: 2)))
            // A server does not hear its own commits.
            #expect(heardByA.events == [.committed(room: "room one", version: 2)])
        }

        @Test func peersAreSharedAndExpireWhenNotRenewed() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let a = try await openStorage(server, peerLifetime: .seconds(2))
            defer { a.close() }
            let b = try await openStorage(server, peerLifetime: .seconds(2))
            defer { b.close() }
            let heardByB = EventCollector(b)
            let peers = [Peer(client: "\(a.node)-1", name: "ada"), Peer(client: "\(a.node)-2", name: "bob")]
            try await a.publish(peers: peers, room: "r")
            #expect(await heardByB.contains(.peersChanged(room: "r")))
            #expect(try await b.remotePeers(room: "r") == peers)
            #expect(try await a.remotePeers(room: "r") == [])
            // Renewed while A runs: the expiry moves on.
            let expiry = "SELECT expires FROM peers WHERE node = \(a.node) AND room = 'r'"
            let first = try server.sql(expiry)
            #expect(await eventually { (try? server.sql(expiry)).map { $0 > first } ?? false })
            // Withdrawn by an empty list.
            try await a.publish(peers: [], room: "r")
            #expect(try await b.remotePeers(room: "r") == [])
            // Gone within the lifetime once A stops renewing (as when it is killed).
            try await a.publish(peers: peers, room: "r")
            a.cancelTasks()
            #expect(try await b.remotePeers(room: "r") == peers)
            #expect(await eventually(within: .seconds(5)) { (try? await b.remotePeers(room: "r")) == [] })
        }

        @Test func closingWithdrawsThePeers() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let a = try await openStorage(server)
            let b = try await openStorage(server)
            defer { b.close() }
            try await a.publish(peers: [Peer(client: "1", name: "ada")], room: "r")
            #expect(try await b.remotePeers(room: "r").count == 1)
            // Long before they would expire: close() withdraws them, without making its caller wait for the database.
            a.close()
            #expect(await eventually(within: .seconds(10)) { (try? await b.remotePeers(room: "r")) == [] })
        }

        @Test func unavailableWhileTheDatabaseIsDownAndBackAfter() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let storage = try await openStorage(server, operationTimeout: .seconds(2))
            defer { storage.close() }
            #expect(storage.isAvailable)
            server.halt()
            do throws(StorageError) {
                _ = try await storage.changes(room: "r", after: 0)
                Issue.record("read from a stopped database")
            } catch {
                guard case .unavailable = error else { throw error }
            }
            #expect(!storage.isAvailable)
            let replica = Replica("a")
            await #expect(throws: StorageError.self) {
                try await storage.write(room: "r", after: 0, prepare: replica.prepare("r", ""))
            }
            try server.start()
            #expect(await eventually(within: .seconds(10)) { storage.isAvailable })
            let fresh = Replica("a")
            try await storage.write(room: "r", after: 0, prepare: fresh.prepare("r", ""))
            #expect(try await storage.changes(room: "r", after: 0).map(\.version) == [1])
        }

        @Test func resynchronisesAfterLosingTheListeningConnection() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let a = try await openStorage(server)
            defer { a.close() }
            let b = try await openStorage(server)
            defer { b.close() }
            let heardByB = EventCollector(b)
            try server.terminateBackends()
            #expect(await heardByB.contains(.resynchronise))
            let replica = Replica("a")
            #expect(
                await eventually {
                    (try? await a.write(room: "r", after: replica.version, prepare: replica.prepare("r", ""))) != nil
                })
            #expect(await heardByB.contains(.committed(room: "r", version: replica.version)))
        }
    }
}

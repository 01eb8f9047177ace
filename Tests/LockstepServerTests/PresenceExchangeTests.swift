import LockstepCore
import LockstepJSON
@testable import LockstepServer
import Testing

/// The decisions of a room's reads of the other servers' clients, with no database: one read at a time, made again
/// when a notice came during one.
struct PresenceExchangeTests {
    static let alice = Peer(client: "c1", name: "alice")
    static let bob = Peer(client: "c2", name: "bob")

    static func alice(at x: Int) -> Peer { Peer(client: "c1", name: "alice", state: ["x": .int(x)]) }

    @Test func aNoticeDuringAReadHasTheRoomReadAgain() {
        var exchange = PresenceExchange()
        let requests = [exchange.readRequested(), exchange.readRequested()]
        #expect(requests == [true, false], "one read at a time")
        let first = exchange.read([Self.alice])
        #expect(first.change == .membership && first.again, "the notice came during the read")
        let second = exchange.read([Self.alice, Self.bob])
        #expect(second.change == .membership && !second.again)
        #expect(!exchange.reading)
        #expect(exchange.remote == [Self.alice, Self.bob])
    }

    @Test func aReadTellsStatesFromMembership() {
        var exchange = PresenceExchange()
        func readOnce(_ peers: [Peer]) -> PresenceExchange.RemoteChange {
            let started = exchange.readRequested()
            #expect(started)
            return exchange.read(peers).change
        }
        #expect(readOnce([Self.alice(at: 1), Self.bob]) == .membership)
        #expect(readOnce([Self.alice(at: 2), Self.bob]) == .states(["c1"]))
        #expect(readOnce([Self.alice(at: 2), Self.bob]) == .nothing)
        #expect(readOnce([Self.bob]) == .membership)
    }

    @Test func aFailedReadEndsAndTheNextRequestReads() {
        var exchange = PresenceExchange()
        _ = exchange.readRequested()
        let during = exchange.readRequested()
        #expect(!during)
        let failed = exchange.read(nil)
        #expect(failed.change == .nothing && !failed.again)
        #expect(exchange.remote == [])
        let next = exchange.readRequested()
        #expect(next)
        let read = exchange.read([Self.bob])
        #expect(read.change == .membership && !read.again)
    }
}

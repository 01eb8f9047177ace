import LockstepCore
import LockstepJSON
@testable import LockstepServer
import Testing

/// The decisions of a room's presence across servers, with no database: one publication at a time with states merged,
/// failures published again, and reads made again when a notice came during one.
struct PresenceExchangeTests {
    static let alice = Peer(client: "c1", name: "alice")
    static let bob = Peer(client: "c2", name: "bob")

    static func alice(at x: Int) -> Peer { Peer(client: "c1", name: "alice", state: ["x": .int(x)]) }

    @Test func statesSetDuringAPublicationAreMergedIntoTheNext() {
        var exchange = PresenceExchange()
        let unchanged = exchange.startPublishing([])
        #expect(unchanged == nil, "nothing changed")
        let first = exchange.startPublishing([Self.alice(at: 1)])
        #expect(first == [Self.alice(at: 1)])
        let during = [exchange.startPublishing([Self.alice(at: 2)]), exchange.startPublishing([Self.alice(at: 3)])]
        #expect(during == [nil, nil], "one publication at a time")
        exchange.published([Self.alice(at: 1)], succeeded: true)
        let next = exchange.nextPublication([Self.alice(at: 3)])
        #expect(next == [Self.alice(at: 3)], "the latest, not each")
        exchange.published([Self.alice(at: 3)], succeeded: true)
        let done = exchange.nextPublication([Self.alice(at: 3)])
        #expect(done == nil)
        #expect(!exchange.publishing)
        #expect(exchange.published == [Self.alice(at: 3)])
    }

    @Test func aFailedPublicationIsMadeAgainUntilStored() {
        var exchange = PresenceExchange()
        let peers = [Self.alice]
        let first = exchange.startPublishing(peers)
        #expect(first == peers)
        exchange.published(peers, succeeded: false)
        let again = exchange.nextPublication(peers)
        #expect(again == peers, "the database missed it: published again")
        exchange.published(peers, succeeded: false)
        // The client left meanwhile, and nothing was ever stored: there is nothing to publish.
        let afterLeaving = exchange.nextPublication([])
        #expect(afterLeaving == nil)
        let bob = exchange.startPublishing([Self.bob])
        #expect(bob == [Self.bob])
    }

    @Test func aStoppingServerEndsItsPublications() {
        var exchange = PresenceExchange()
        _ = exchange.startPublishing([Self.alice])
        exchange.published([Self.alice], succeeded: false)
        let next = exchange.nextPublication([Self.alice], stopped: true)
        #expect(next == nil)
        #expect(!exchange.publishing)
    }

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

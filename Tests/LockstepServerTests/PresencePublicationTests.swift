import LockstepCore
import LockstepJSON
@testable import LockstepServer
import Testing

/// The decisions of a server's publication of its clients of a room, with no database: one publication at a time
/// with states merged, and failures published again.
struct PresencePublicationTests {
    static let alice = PresenceExchangeTests.alice
    static let bob = PresenceExchangeTests.bob

    static func alice(at x: Int) -> Peer { PresenceExchangeTests.alice(at: x) }

    @Test func statesSetDuringAPublicationAreMergedIntoTheNext() {
        var publication = PresencePublication()
        let unchanged = publication.startPublishing([])
        #expect(unchanged == nil, "nothing changed")
        let first = publication.startPublishing([Self.alice(at: 1)])
        #expect(first == [Self.alice(at: 1)])
        let during = [publication.startPublishing([Self.alice(at: 2)]), publication.startPublishing([Self.alice(at: 3)])]
        #expect(during == [nil, nil], "one publication at a time")
        publication.published([Self.alice(at: 1)], succeeded: true)
        let next = publication.nextPublication([Self.alice(at: 3)])
        #expect(next == [Self.alice(at: 3)], "the latest, not each")
        publication.published([Self.alice(at: 3)], succeeded: true)
        let done = publication.nextPublication([Self.alice(at: 3)])
        #expect(done == nil)
        #expect(!publication.publishing)
        #expect(publication.published == [Self.alice(at: 3)])
    }

    @Test func aFailedPublicationIsMadeAgainUntilStored() {
        var publication = PresencePublication()
        let peers = [Self.alice]
        let first = publication.startPublishing(peers)
        #expect(first == peers)
        publication.published(peers, succeeded: false)
        let again = publication.nextPublication(peers)
        #expect(again == peers, "the database missed it: published again")
        publication.published(peers, succeeded: false)
        // The client left meanwhile, and nothing was ever stored: there is nothing to publish.
        let afterLeaving = publication.nextPublication([])
        #expect(afterLeaving == nil)
        let bob = publication.startPublishing([Self.bob])
        #expect(bob == [Self.bob])
    }

    @Test func aStoppingServerEndsItsPublications() {
        var publication = PresencePublication()
        _ = publication.startPublishing([Self.alice])
        publication.published([Self.alice], succeeded: false)
        let next = publication.nextPublication([Self.alice], stopped: true)
        #expect(next == nil)
        #expect(!publication.publishing)
    }
}

import LockstepCore

/// How this server's clients of one room go out to the shared database, decided with no I/O: one publication at a
/// time, with the clients as they are when it starts (states set in between are merged, never queued), and one more
/// after its wait when they changed or it failed.
///
/// Kept by room name, not by the room in memory: a room that leaves memory and comes back while a publication waits
/// has one publisher, so what the earlier copy publishes at the end of its wait never overwrites the later one's.
/// ``SharedLogPipeline`` carries out what it decides; the cluster simulation drives the same type.
struct PresencePublication {
    /// This server's clients as last published.
    private(set) var published: [Peer] = []
    /// A publication runs, or waits before looking for the next.
    private(set) var publishing = false

    /// The clients to publish, when a publication should start now: none runs and `current` differs from what was
    /// published.
    mutating func startPublishing(_ current: [Peer]) -> [Peer]? {
        guard !publishing, current != published else { return nil }
        publishing = true
        return current
    }

    /// A publication of `peers` ended, stored (`succeeded`) or not.
    mutating func published(_ peers: [Peer], succeeded: Bool) {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.failedPublicationForgotten) { published = peers }
        #endif
        if succeeded { published = peers }
    }

    /// After a publication's wait: the clients to publish next, or nil when `current` is what was published (or the
    /// server stops), and publishing ends.
    mutating func nextPublication(_ current: [Peer], stopped: Bool = false) -> [Peer]? {
        guard publishing else { return nil }
        guard !stopped, current != published else {
            publishing = false
            return nil
        }
        return current
    }
}

import LockstepCore
import LockstepStorage

/// What other servers committed, applied to a room's copy with no I/O: the changes after its version, replayed through
/// the app (``RoomReplay``), each one's inverse kept in the room's timeline for reverts and past reads.
///
/// ``SharedLogPipeline`` sends what it applied to the room's clients; the cluster simulation runs the same.
enum CommittedReplay {
    struct Outcome {
        /// The changes applied, oldest first: the room's clients get them as stored.
        var applied: [StoredChange] = []
        /// Why the copy cannot follow the log past them, when it cannot: the room is read again.
        var failure: String?
    }

    /// Applies `changes` (oldest first; those the copy has are skipped) to `store` and `timeline`.
    static func apply(
        _ changes: [StoredChange], to store: inout any RoomStore, timeline: inout RoomTimeline, app: App
    ) -> Outcome {
        let fresh = changes.drop { $0.version <= store.version }
        guard let first = fresh.first else { return Outcome() }
        guard first.version == store.version + 1 else {
            return Outcome(failure: "version \(first.version) does not follow \(store.version)")
        }
        let replay: RoomReplay
        do {
            replay = try RoomReplay(continuing: store, with: Array(fresh), app: app)
        } catch {
            return Outcome(failure: "the log could not be followed: \(error)")
        }
        store = replay.store
        var outcome = Outcome()
        for change in fresh where change.version <= replay.store.version {
            guard let inverse = try? change.parsedRecord().inverse else {
                outcome.failure = "the record of version \(change.version) does not read"
                return outcome
            }
            timeline.record(version: change.version, inverse: inverse, stored: change.version)
            outcome.applied.append(change)
        }
        if let damaged = replay.damagedFrom { outcome.failure = "its log breaks at version \(damaged)" }
        return outcome
    }
}

import DequeModule
import LockstepJSON
import LockstepStorage

/// The inverse patch of each recent change of a room, oldest first, so a past state is rebuilt backwards from the
/// current one at the cost of the distance to it.
///
/// Holds at least `window` changes (the server's `--resume-window`), and every change the log has not yet
/// acknowledged, so whatever is older is in the log when there is one. Loop-bound, like its ``Room``.
struct RoomTimeline {
    struct Step {
        /// The version the change produced.
        let version: Int
        /// Takes the state of `version` back to `version - 1`.
        let inverse: JSONPatch
    }

    private(set) var steps: Deque<Step> = []
    let window: Int

    init(window: Int) {
        self.window = window
    }

    /// The oldest version whose inverse is held; nil when none is.
    var oldestVersion: Int? { steps.first?.version }

    /// Remembers the change that produced `version`; forgets the oldest ones past the window once they are stored.
    mutating func record(version: Int, inverse: JSONPatch, stored storedVersion: Int) {
        steps.append(Step(version: version, inverse: inverse))
        while steps.count > window, let first = steps.first, first.version <= storedVersion {
            steps.removeFirst()
        }
    }

    /// Takes up the inverses of the changes a log holds (oldest first), for a room read back into memory: the newest
    /// run of them without a gap that ends at `version`, the room's current one.
    mutating func restore(_ changes: [(version: Int, inverse: JSONPatch?)], through version: Int) {
        var run: [Step] = []
        for change in changes.reversed() {
            guard change.version == version - run.count, let inverse = change.inverse else { break }
            run.append(Step(version: change.version, inverse: inverse))
        }
        steps = Deque(run.reversed())
    }

    /// The state of `version`, rebuilt from `state`, the state of version `current`: the inverse patches of every
    /// later change applied, newest first, from this timeline and then from `older` (stored changes read beforehand,
    /// oldest first). Costs the distance back, never a replay of the room's life.
    func state(
        at version: Int, from state: JSON, current: Int, older: [StoredChange]
    ) throws(TimeTravelError) -> JSON {
        guard (0...current).contains(version) else { throw .neverHad(version, current: current) }
        var state = state
        var held = steps.first?.version ?? current + 1
        for step in steps.reversed() {
            guard step.version > version else { break }
            try Self.apply(step.inverse, to: &state, version: step.version)
        }
        for change in older.reversed() where change.version < held && change.version > version {
            guard change.version == held - 1 else { break }
            let inverse: JSONPatch
            do {
                inverse = try change.parsedRecord().inverse
            } catch {
                throw .broken("the log's inverse of version \(change.version) is damaged: \(error)")
            }
            try Self.apply(inverse, to: &state, version: change.version)
            held = change.version
        }
        guard version + 1 >= held else {
            throw .unknownVersion(version, oldest: held - 1)
        }
        return state
    }

    private static func apply(_ inverse: JSONPatch, to state: inout JSON, version: Int) throws(TimeTravelError) {
        do {
            try inverse.apply(to: &state)
        } catch {
            throw .broken("the inverse of version \(version) does not apply: \(error)")
        }
    }

    /// Forgets the changes after `version`: they were taken back.
    mutating func forget(after version: Int) {
        while let last = steps.last, last.version > version { steps.removeLast() }
    }
}

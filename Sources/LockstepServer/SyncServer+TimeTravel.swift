import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Time travel: `revert` and the state of a past version, rebuilt backwards from the current state.
extension SyncServer {
    /// Puts the room back to the state of `version` as one new change, or acknowledges a no-op when that state is the
    /// current one. The reducer does not run and no effect starts.
    func revert(to version: Int, id: String?, seq: Int?, from session: Session) {
        let room = session.room
        do throws(TimeTravelError) {
            let target = try state(of: room, at: version)
            let change: Change?
            do {
                change = try room.store.revert(to: version, state: target)
            } catch {
                throw TimeTravelError.broken(error.message)
            }
            if let change {
                publish(change, in: room, cause: Cause(change.kind, client: session.client, id: id, action: nil))
            }
            acknowledge(id: id, version: room.store.version, seq: seq, to: session)
        } catch {
            send(.error(id: id, code: error.code, message: error.message), to: session)
        }
    }

    /// The oldest version of `room` whose state can be rebuilt: from the inverse patches in memory, or further back
    /// from those in the log.
    func oldestVersion(of room: Room) -> Int {
        let held = room.timeline.oldestVersion ?? room.store.version + 1
        guard let log, let stored = try? log.oldestChange(room: room.name), stored < held else { return held - 1 }
        return stored - 1
    }

    /// The state `room` had at `version`: the current state with the inverse patches of every later change applied,
    /// newest first. Costs the distance back, never a replay of the room's life.
    func state(of room: Room, at version: Int) throws(TimeTravelError) -> JSON {
        let current = room.store.version
        guard (0...current).contains(version) else { throw .neverHad(version, current: current) }
        var state: JSON
        do {
            state = try room.store.stateJSON()
        } catch {
            throw .broken(error.message)
        }
        let steps = room.timeline.steps
        let held = steps.first?.version ?? current + 1
        for step in steps.reversed() {
            guard step.version > version else { break }
            try Self.apply(step.inverse, to: &state, version: step.version)
        }
        guard version + 1 < held else { return state }

        // Older than memory holds: the log's inverses, newest page first, as far back as it keeps changes.
        guard let log, let stored = try? log.oldestChange(room: room.name), stored <= version + 1 else {
            throw .unknownVersion(version, oldest: oldestVersion(of: room))
        }
        var top = held - 1
        while top > version {
            let bottom = max(version, top - Self.rebuildPage)
            let page: [StoredChange]
            do {
                page = try log.changes(room: room.name, after: bottom, through: top, limit: top - bottom)
            } catch {
                throw .broken("\(error)")
            }
            guard page.count == top - bottom, page.first?.version == bottom + 1 else {
                throw .unknownVersion(version, oldest: oldestVersion(of: room))
            }
            for change in page.reversed() {
                let inverse: JSONPatch
                do {
                    inverse = try JSONPatch(json: JSON(parsing: change.inverse))
                } catch {
                    throw .broken("the log's inverse of version \(change.version) is damaged: \(error)")
                }
                try Self.apply(inverse, to: &state, version: change.version)
            }
            top = bottom
        }
        return state
    }

    /// Changes read from the log at once while rebuilding, so a long way back never holds the whole log in memory.
    private static let rebuildPage = 1_000

    private static func apply(_ inverse: JSONPatch, to state: inout JSON, version: Int) throws(TimeTravelError) {
        do {
            try inverse.apply(to: &state)
        } catch {
            throw .broken("the inverse of version \(version) does not apply: \(error)")
        }
    }
}

import LockstepCore
import LockstepJSON
import LockstepStorage

/// Takes a room's store back over a batch applied on top of a version and then not committed: each change's inverse,
/// newest first, and the undo history back to the checkpoint set before the batch. Pure, so that the cluster
/// simulation takes batches back with the server's own code.
enum StoreRollback {
    /// Why a store cannot be taken back; the room must then be read again.
    enum Failure: Error, CustomStringConvertible {
        /// The history was not checkpointed before the batch.
        case noCheckpoint
        /// A change's inverse does not apply, or the state does not decode.
        case irreversible(String)

        var description: String {
            switch self {
            case .noCheckpoint: "its history holds no checkpoint to go back to"
            case .irreversible(let reason): "a change could not be taken back: \(reason)"
            }
        }
    }

    /// `store` without `changes` (the batch's, oldest first), at `version` again.
    static func rollingBack(
        _ store: any RoomStore, changes: [StoredChange], to version: Int, app: App
    ) throws(Failure) -> any RoomStore {
        var history = store.history
        guard history.hasCheckpoint else { throw .noCheckpoint }
        do {
            var json = try store.stateJSON()
            for change in changes.reversed() {
                try change.parsedRecord().inverse.apply(to: &json)
            }
            #if LOCKSTEP_MUTANTS
            if Mutant.isActive(.rollbackKeepsHistory) { history.releaseCheckpoint() }
            #endif
            history.rollBackToCheckpoint()
            return try app.restoreStore(state: json, version: version, history: history)
        } catch {
            throw .irreversible("\(error)")
        }
    }

    /// Takes a room's copy back to `version` over its batch (`rows`, oldest first, and the session marks it moved):
    /// the store, the timeline of inverses, and the marks. Nothing changes when it throws.
    static func takeBack(
        _ rows: [StoredChange], marks moved: [StoredMark], to version: Int, store: inout any RoomStore,
        timeline: inout RoomTimeline, marks: inout SessionMarks, app: App
    ) throws(Failure) {
        store = try rollingBack(store, changes: rows, to: version, app: app)
        timeline.forget(after: version)
        for mark in moved { marks.rollBack(mark.session) }
    }
}

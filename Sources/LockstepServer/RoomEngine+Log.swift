import LockstepCore
import LockstepStorage

/// What the log does to a room's copy on several servers: changes other servers committed applied, a batch that was
/// not committed taken back.
extension RoomEngine {
    /// Applies changes another server committed (``CommittedReplay/publish(_:to:timeline:views:app:)``): the store,
    /// the timeline and each view move on; returns the patches to release.
    mutating func apply(committed changes: [StoredChange], app: App) -> CommittedReplay.Published {
        CommittedReplay.publish(changes, to: &store, timeline: &timeline, views: &views, app: app)
    }

    /// Takes the room back to `version` over a batch that was not committed (`rows`, oldest first, and the marks it
    /// moved): ``StoreRollback/takeBack(_:marks:to:store:timeline:marks:app:)``. Nothing changes when it throws.
    mutating func takeBack(
        _ rows: [StoredChange], marks moved: [StoredMark], to version: Int, app: App
    ) throws(StoreRollback.Failure) {
        try StoreRollback.takeBack(
            rows, marks: moved, to: version, store: &store, timeline: &timeline, marks: &marks, app: app)
    }
}

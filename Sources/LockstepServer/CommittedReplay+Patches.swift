import LockstepCore
import LockstepStorage

extension CommittedReplay {
    /// What other servers committed, as the room's clients get it.
    struct Published {
        /// Each change applied, oldest first: the stored bytes, and what each of the room's views sees of it.
        var patches: [Room.LoggedPatch] = []
        /// Why the copy cannot follow the log past them, when it cannot: the room is read again.
        var failure: String?
    }

    /// ``apply(_:to:timeline:app:)``, then each change applied as the room's clients get it, projected for each view
    /// against the state before it (``Room/loggedPatch(_:views:document:)``). ``SharedLogPipeline`` sends them; the
    /// cluster simulation runs the same.
    static func publish(
        _ changes: [StoredChange], to store: inout any RoomStore, timeline: inout RoomTimeline,
        views: inout RoomViews, app: App
    ) -> Published {
        // The state before them, when views need each change's state after it.
        var document = views.isEmpty ? nil : try? store.stateJSON()
        let outcome = apply(changes, to: &store, timeline: &timeline, app: app)
        var published = Published(failure: outcome.failure)
        for change in outcome.applied {
            guard let patch = Room.loggedPatch(change, views: &views, document: &document) else {
                published.failure = "version \(change.version) is not a patch"
                break
            }
            published.patches.append(patch)
        }
        return published
    }
}

import LockstepCore

/// What the reducer sees of a request: its sender, its time and a random source.
extension SyncServer {
    func context(for session: Session, in room: Room) -> ReducerContext {
        context(for: session.sender(run: runID), in: room)
    }

    /// The context of the room's next change: its time never goes below the previous change's, even when the clock
    /// goes back or another server's clock ran ahead.
    func context(for sender: Sender?, in room: Room) -> ReducerContext {
        ReducerContext(
            sender: sender, time: max(clock.epochMilliseconds, room.store.history.authors.latestTime),
            version: room.store.version + 1, epoch: room.epoch)
    }
}

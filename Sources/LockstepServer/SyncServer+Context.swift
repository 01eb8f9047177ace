import LockstepCore
import LockstepJSON

/// What the reducer sees of a request: its sender, its time and a random source.
extension SyncServer {
    func context(for requester: any Requester, in room: Room) -> ReducerContext {
        var context = context(for: requester.sender(run: runID), in: room)
        if !privateParts.isEmpty { context.refusal = privateParts.writeRefusal(by: requester.subject) }
        return context
    }

    /// The context of the room's next change: its time never goes below the previous change's, even when the clock
    /// goes back or another server's clock ran ahead.
    func context(for sender: Sender?, in room: Room) -> ReducerContext {
        ReducerContext(
            sender: sender, time: max(clock.epochMilliseconds, room.store.history.authors.latestTime),
            version: room.store.version + 1, epoch: room.epoch)
    }

    /// A JSON Patch action may also read (`test`, `from`): refused, before it runs, where it reads, writes or carries
    /// someone else's private part of the room as it stands.
    func checkReads(of action: JSON, by requester: any Requester) throws(StoreError) {
        guard !privateParts.isEmpty, let operations = PrivateParts.operations(in: action) else { return }
        let state = try requester.room.store.stateJSON()
        if let refusal = privateParts.refusal(of: operations, on: state, by: requester.subject) {
            throw .forbidden(refusal)
        }
    }

    /// The words of `error` for `requester`. Errors of a room with private parts say where, never what: a reason that
    /// names a value of someone else's private part (an app may word its refusals from the state) is withheld.
    func message(of error: StoreError, for requester: any Requester) -> String {
        guard !privateParts.isEmpty, let state = try? requester.room.store.stateJSON(),
            privateParts.reveals(error.message, of: state, to: requester.subject)
        else { return error.message }
        return "the request was refused; its reason is withheld because it names someone else's private part"
    }
}

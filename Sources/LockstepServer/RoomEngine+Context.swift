import LockstepCore
import LockstepJSON

/// What the reducer sees of a request, and what private parts refuse of it.
extension RoomEngine {
    /// The context of the room's next change, made by `sender`: its time never goes below the previous change's, even
    /// when the clock goes back or another server's clock ran ahead.
    func context(for sender: Sender?, in step: Step) -> ReducerContext {
        ReducerContext(
            sender: sender, time: max(step.time.milliseconds, store.history.authors.latestTime),
            version: store.version + 1, epoch: step.epoch)
    }

    /// The context of a request's change: refused where it writes someone else's private part. (An effect's change,
    /// the app's own, is not.)
    func context(for source: Source, in step: Step) -> ReducerContext {
        var context = context(for: source.sender, in: step)
        if !step.rules.guarded.isEmpty { context.refusal = step.rules.guarded.writeRefusal(by: source.subject) }
        return context
    }

    /// A JSON Patch action may also read (`test`, `from`): refused, before it runs, where it reads, writes or carries
    /// someone else's private part of the room as it stands.
    func checkReads(of action: JSON, by subject: String?, in step: Step) throws(StoreError) {
        let parts = step.rules.guarded
        guard !parts.isEmpty, let operations = PrivateParts.operations(in: action) else { return }
        if let refusal = parts.refusal(of: operations, on: try store.stateJSON(), by: subject) {
            throw .forbidden(refusal)
        }
    }

    /// The words of `error` for `subject`. Errors of a room with private parts say where, never what: a reason that
    /// names a value of someone else's private part (an app may word its refusals from the state) is withheld.
    func message(of error: StoreError, for subject: String?, in step: Step) -> String {
        let parts = step.rules.guarded
        guard !parts.isEmpty, let state = try? store.stateJSON(), parts.reveals(error.message, of: state, to: subject)
        else { return error.message }
        return "the request was refused; its reason is withheld because it names someone else's private part"
    }
}

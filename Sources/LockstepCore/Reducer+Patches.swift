public import LockstepJSON

extension Reducer {
    /// The typed differ: runs `reduce` on a copy of the state, compares, and diffs the two states.
    public func reduceRecordingPatches(
        into state: inout State, action: Action
    ) throws(StoreError) -> Reduction<Action> {
        var next = state
        let effect: Effect<Action>
        do {
            effect = try reduce(into: &next, action: action)
        } catch {
            throw .rejected(error.message)
        }
        guard next != state else { return Reduction(forward: JSONPatch(), inverse: JSONPatch(), effect: effect) }
        var differ = StateDiffer()
        do {
            try differ.diffChanged(state, next, at: .root)
        } catch {
            throw .brokenState("\(error)")
        }
        state = next
        return Reduction(forward: JSONPatch(differ.forward), inverse: JSONPatch(differ.inverse), effect: effect)
    }

    /// Through the state's JSON: encodes the whole state, applies the patch, decodes the result.
    public func apply(_ patch: JSONPatch, to state: inout State) throws(StoreError) {
        try applyThroughJSON(patch, to: &state)
    }

    /// The default of ``apply(_:to:)``, for reducers that apply some patches themselves and leave the rest.
    public func applyThroughJSON(_ patch: JSONPatch, to state: inout State) throws(StoreError) {
        var document: JSON
        do {
            document = try JSON(encoding: state)
        } catch {
            throw .brokenState("\(error)")
        }
        do {
            try patch.apply(to: &document)
            state = try document.decode(State.self)
        } catch {
            throw .brokenState("a stored patch no longer applies: \(error)")
        }
    }
}

extension Reducer where State == JSON {
    /// In place: the work follows the patch, not the document.
    public func apply(_ patch: JSONPatch, to state: inout JSON) throws(StoreError) {
        do {
            try patch.apply(to: &state)
        } catch {
            throw .brokenState("a stored patch no longer applies: \(error)")
        }
    }
}

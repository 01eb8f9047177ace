public import LockstepJSON

extension Reducer {
    public func reduce(
        into state: inout State, action: Action, context: ReducerContext
    ) throws(Rejection) -> Effect<Action> {
        try reduce(into: &state, action: action)
    }

    /// The typed differ: runs `reduce` on a copy of the state, compares, and diffs the two states.
    public func reduceRecordingPatches(
        into state: inout State, action: Action, context: ReducerContext
    ) throws(StoreError) -> Reduction<Action> {
        var next = state
        let effect: Effect<Action>
        do {
            effect = try reduce(into: &next, action: action, context: context)
        } catch {
            throw .rejected(error.message)
        }
        return try Self.diff(from: &state, to: next, effect: effect)
    }

    /// Makes `next` the state and returns the patches between the two.
    static func diff(
        from state: inout State, to next: State, effect: Effect<Action> = .none
    ) throws(StoreError) -> Reduction<Action> {
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

    public func encodedCompensation(for action: Action, in state: State, context: ReducerContext) -> JSON? { nil }

    public func takeBack(
        _ compensation: JSON, in state: inout State
    ) throws(StoreError) -> (reduction: Reduction<Action>, compensation: JSON?) {
        throw .conflict("this app has no compensations")
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

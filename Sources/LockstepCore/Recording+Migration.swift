import LockstepJSON

extension Recording {
    /// The recording as a room of `evolution`'s state version would have recorded it: every recorded state migrated,
    /// and each step's patch recomputed between the migrated states. Causes (the actions to send again) are kept, so
    /// a recording made under an older state version replays into a newer app. Unchanged when it is already current.
    public func migrated(by evolution: StateEvolution) throws(MigrationError) -> Recording {
        guard stateVersion != evolution.version else { return self }
        var old = state
        var previous = try evolution.migrate(old, from: stateVersion)
        var migrated = self
        migrated.state = previous
        migrated.stateVersion = evolution.version
        for index in steps.indices {
            do {
                try steps[index].ops.apply(to: &old)
            } catch {
                throw .failed(
                    from: stateVersion,
                    reason: "the recording's patch of version \(steps[index].version) does not apply: \(error)")
            }
            let next = try evolution.migrate(old, from: stateVersion)
            migrated.steps[index].ops = JSONPatch(from: previous, to: next)
            previous = next
        }
        return migrated
    }
}

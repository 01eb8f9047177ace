public import LockstepJSON

/// The version of an app's `State` shape, and the migrations that bring states stored under older versions up to it.
///
/// An app that never changed its `State` is at version 1 with no migration. Each change to its shape that stored
/// rooms would not decode under (a field added without a default, renamed, or moved) raises the version by one and
/// adds the ``Migration`` from the version before. Servers stamp every stored state with its version, and run the
/// migrations, in order, on states of older versions when they load them.
public struct StateEvolution: Sendable {
    /// The version states of this app are written in now.
    public let version: Int
    /// One migration per older version, from 1 up to `version - 1`, in that order.
    public let migrations: [Migration]

    /// An app whose `State` has had one shape so far.
    public static let initial = StateEvolution(version: 1, migrations: [])

    /// Checks that `migrations` lead, one version at a time, from 1 to `version`: a gap would strand stored rooms.
    public init(version: Int, migrations: [Migration]) {
        precondition(version >= 1, "a state version is 1 or more, not \(version)")
        let steps = migrations.map(\.from)
        precondition(
            steps == Array(1..<version),
            "state version \(version) needs one migration from each of versions \(Array(1..<version)), in order; "
                + "the migrations given are from \(steps)")
        self.version = version
        self.migrations = migrations
    }

    /// `state`, stored under `stateVersion`, brought to ``version``.
    public func migrate(_ state: JSON, from stateVersion: Int) throws(MigrationError) -> JSON {
        guard stateVersion <= version else { throw .newerThanApp(stored: stateVersion, app: version) }
        var state = state
        for migration in migrations.dropFirst(max(0, stateVersion - 1)) { try migration.apply(to: &state) }
        return state
    }
}

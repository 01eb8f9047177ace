public import LockstepCore

/// The `lockstep` command line as a library, so an executable built around its own reducers gets every subcommand
/// and option of `lockstep`: `serve` (SQLite or PostgreSQL, tokens, TLS, drain on SIGTERM), `token`, `replay`, `load`,
/// `check` (every stored room loads with the app's migrations).
///
/// ```swift
/// import LockstepCommand
///
/// await LockstepCommand.main(apps: [kanban])
/// ```
public enum LockstepCommand {
    /// Parses the process's arguments, runs the subcommand they name (`serve` by default) and exits; `--app` chooses
    /// among `apps` by `App.name`, the first by default. `apps` must not be empty, and their names
    /// must differ.
    public static func main(apps: [App]) async {
        precondition(!apps.isEmpty, "LockstepCommand.main needs at least one app")
        precondition(Set(apps.map(\.name)).count == apps.count, "LockstepCommand.main: two apps have the same name")
        await CommandApps.$apps.withValue(apps) {
            await Lockstep.main()
        }
    }
}

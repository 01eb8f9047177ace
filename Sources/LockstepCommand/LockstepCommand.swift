public import LockstepCore

/// The `lockstep` command line as a library, so a server built around its own reducers gets every subcommand.
public enum LockstepCommand {
    /// Parses the process's arguments and runs the subcommand they name (serve by default), then exits.
    public static func main(apps: [App]) async {
        await Lockstep.main()
    }
}

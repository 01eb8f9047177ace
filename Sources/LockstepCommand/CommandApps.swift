import LockstepApps
import LockstepCore

/// The apps `--app` chooses among: those given to ``LockstepCommand/main(apps:)``, for the run of the command.
enum CommandApps {
    @TaskLocal static var apps: [App] = App.builtIn

    /// The first app: the one served when `--app` is not given.
    static var first: App { apps[0] }

    /// Their names, for help and errors.
    static var names: String { apps.map(\.name).joined(separator: ", ") }

    /// The app named `name`.
    static func named(_ name: String) -> App? { apps.first { $0.name == name } }
}

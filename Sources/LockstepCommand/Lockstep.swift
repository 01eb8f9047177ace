import ArgumentParser
import Foundation

/// The root command; its name in usage lines is the executable's (`lockstep`, or a custom app's own).
struct Lockstep: AsyncParsableCommand {
    /// The executable's name, as usage lines and hints say it.
    static let name =
        CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "lockstep") } ?? "lockstep"

    static let configuration = CommandConfiguration(
        commandName: name,
        abstract: "A server-authoritative state sync server: shared rooms, one reducer, JSON Patch to every client.",
        subcommands: [Serve.self, GenerateLoad.self, Token.self, Replay.self, Check.self],
        defaultSubcommand: Serve.self
    )

    /// Parses and runs the command; `lockstep serve` first takes the options its command line lacks from the
    /// environment (``EnvironmentOptions``).
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var used: [String] = []
        if servesRooms(arguments) {
            let environment = EnvironmentOptions(
                command: Serve.self, environment: ProcessInfo.processInfo.environment)
            do {
                (arguments, used) = try environment.completing(arguments)
            } catch {
                exit(withError: ValidationError(error.description))
            }
        }
        var command: any ParsableCommand
        do {
            command = try await asyncParseAsRoot(arguments)
        } catch {
            if !used.isEmpty, exitCode(for: error) != .success {
                // The parser names options: say which of them came from the environment.
                let note = "lockstep: from the environment: \(used.joined(separator: ", ")) (flags win over them)\n"
                FileHandle.standardError.write(Data(note.utf8))
            }
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    /// Whether `arguments` run `lockstep serve`: named, or as the default subcommand (no subcommand, only options).
    private static func servesRooms(_ arguments: [String]) -> Bool {
        guard let first = arguments.first else { return true }
        return first == "serve" || (first.hasPrefix("-") && !["-h", "--help", "--version"].contains(first))
    }
}

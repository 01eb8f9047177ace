import ArgumentParser

@main
struct Lockstep: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lockstep",
        abstract: "A server-authoritative state sync server: shared rooms, one reducer, JSON Patch to every client.",
        subcommands: [Serve.self, Load.self, Token.self, Replay.self],
        defaultSubcommand: Serve.self
    )
}

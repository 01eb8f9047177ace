import ArgumentParser
import Foundation
import LockstepClient
import LockstepTransport
#if canImport(Glibc)
import Glibc
#endif

/// `lockstep-client`: a live, full-screen view of one room with a command prompt, or a JSON-lines tool for
/// scripts when stdin is not a terminal or `--exec` is given.
@main
struct ClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lockstep-client",
        abstract: "Join a Lockstep room: see it live, send actions, undo and redo (the room's or your own), revert.",
        discussion: """
            Interactive on a terminal. With --exec "cmd; cmd", or with commands on stdin, prints every update as \
            one JSON line and exits once each command is answered (exit 1: cannot connect; 2: a command failed).
            While the server is away, commands wait in the outbox (the header says "offline, N pending" and shows \
            their predicted effect) and are sent, each applied once, when it is back. With --keep DIR the session, \
            the outbox and the last state are kept in DIR: started again, the client shows them at once, even \
            with no server ("offline, N waiting"), and sends what waits when the server answers.
            The log shows each change's version, author and time (v12 alice 14:03:07 add ...). "undo mine" takes \
            back your own latest change (your session's: --session), leaving others' later ones; "redo mine" \
            re-applies it. "later 30 +" has the server apply "+" in 30 seconds, as your change, even if you have \
            left by then; "timers" lists the room's pending timers and "cancel NAME" takes one away. While you type \
            a command, the others see "NAME is typing".
            Commands for every app: \(AppKind.commonHelp.joined(separator: ". "))
            counter: \(AppKind.counter.helpLines.joined(separator: " "))
            todos: \(AppKind.todos.helpLines.joined(separator: " "))
            json: \(AppKind.json.helpLines.joined(separator: " "))
            """
    )

    @Argument(
        help: """
            The room's address, ws://HOST:PORT/rooms/ROOM (wss:// over TLS); several (servers sharing a database) are tried in turn, \
            and the client moves to the next when its server goes away.
            """)
    var urls: [String]

    @Option(help: "A PEM file of certificates to trust for wss:// besides the system's (e.g. a self-signed one).")
    var caFile: String?

    @Option(help: "The name other clients see.")
    var name: String?

    @Option(help: "The session name (1-64 of A-Z a-z 0-9 . _ -) that numbers this client's requests; random if unset.")
    var session: String?

    @Option(help: "The room's app (json, counter, todos) when guessing it from the state's shape is wrong.")
    var app: AppKind?

    @Option(
        help: """
            Follow only the part of the room at this JSON Pointer (/boards/7): the screen and the updates show that \
            value, and skip changes that do not touch it. Commands still name whole-room paths.
            """)
    var path: String?

    @Option(help: "Commands to run, separated by ';', then exit (non-interactive).")
    var exec: String?

    @Option(
        help: """
            Keep the session, the commands not yet applied and the last state in this directory, across restarts \
            (with --session). Without a terminal, actions are kept and the client moves on, then exits once each \
            was applied.
            """)
    var keep: String?

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give the room's address: ws://HOST:PORT/rooms/ROOM") }
    }

    func run() async throws {
        let url = urls[0]
        let room: RoomClient
        do {
            let transport = try WebSocketClient(trustedCertificatesFile: caFile)
            room = try RoomClient(
                urls: urls, path: RoomClient.pointer(path ?? ""), name: name, session: session, transport: transport,
                keep: keep.map { KeepDirectory($0, app: "lockstep-client") })
            try await room.connect()
        } catch {
            FileHandle.standardError.write(Data("lockstep-client: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let code: Int32
        if exec == nil, isatty(0) != 0, isatty(1) != 0 {
            code = await InteractiveSession(room: room, url: url, app: app, name: name, kept: keep != nil).run()
        } else {
            let commands = exec.map(ScriptSession.commands(from:)) ?? ScriptSession.standardInputLines()
            code = await ScriptSession(room: room, url: url, app: app, kept: keep != nil).run(commands: commands)
        }
        if code != 0 { throw ExitCode(code) }
    }
}

extension AppKind: ExpressibleByArgument {}

import ArgumentParser
import Foundation
import LockstepCore
import LockstepPostgres
import LockstepSQLite
import LockstepStorage
import Logging

/// `lockstep check`: loads every stored room with the app as a server would, writing nothing, and lists the rooms
/// that would not load, so a new version of an app can be tried on the rooms it will meet before it serves them.
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that every stored room loads with the app (its migrations run); nothing is written.",
        discussion: """
            Reads each room as a server loads it: its latest stored state and the changes after it, replayed, then \
            the app's migrations from the state version it was stored in. Prints each room that would not load, \
            with why, then a summary. Exit status: 0 when every room loads, 1 when one does not, 2 when the rooms \
            cannot be read.

            --data reads the directory without writing to it, and refuses while a server uses it (a server cannot \
            start on it during the check either). --postgres reads in one read-only transaction and may run beside \
            the servers.
            """
    )

    @Option(help: "The app to load the rooms with: \(CommandApps.names) (default: \(CommandApps.first.name)).")
    var app: String?

    @Option(help: "The data directory to check, as `serve --data` uses it.")
    var data = "./lockstep-data"

    @Option(help: "Check the rooms in PostgreSQL instead (postgres://USER[:PASSWORD]@HOST:PORT/DATABASE).")
    var postgres: String?

    @Option(help: "With --postgres: how long connecting, or reading one room, may take.")
    var postgresTimeout = Duration.seconds(5)

    /// Changes of undo history a server keeps per room: the stored history is read back with this depth.
    private static let undoDepth = 1000

    func validate() throws {
        if let app, CommandApps.named(app) == nil {
            throw ValidationError("unknown app '\(app)'; choose one of: \(CommandApps.names)")
        }
        guard postgresTimeout >= .milliseconds(100) else {
            throw ValidationError("--postgres-timeout must be at least 100ms")
        }
    }

    func run() async throws {
        let checked = app.flatMap(CommandApps.named) ?? CommandApps.first
        let rooms: [CheckedRoom]
        do throws(CheckError) {
            if let postgres {
                rooms = try await Self.check(postgres: postgres, app: checked, timeout: postgresTimeout)
            } else {
                rooms = try await Self.check(directory: data, app: checked)
            }
        } catch {
            FileHandle.standardError.write(Data("\(Lockstep.name) check: \(error)\n".utf8))
            throw ExitCode(2)
        }
        for line in rooms.compactMap(\.line) { print(line) }
        print(Self.summary(of: rooms, app: checked))
        if rooms.contains(where: { $0.failure != nil }) { throw ExitCode(1) }
    }

    /// Every room of the data directory, read without writing; a server must not be using it.
    static func check(directory: String, app: App) async throws(CheckError) -> [CheckedRoom] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .noDirectory(path: directory)
        }
        let log: RoomLog
        do {
            log = try RoomLog(readingOnly: directory, app: app.name)
        } catch .directoryInUse(let path) {
            throw .directoryInUse(path: path)
        } catch {
            throw .storage(error)
        }
        defer { log.close() }
        do {
            var checked: [CheckedRoom] = []
            for room in try await log.rooms() {
                guard let stored = try await log.load(room: room) else { continue }
                checked.append(CheckedRoom(room: room, stored: stored, app: app, undoDepth: undoDepth))
            }
            return checked
        } catch {
            throw .storage(error)
        }
    }

    /// Every room of the PostgreSQL database, read in one read-only transaction.
    static func check(postgres url: String, app: App, timeout: Duration) async throws(CheckError) -> [CheckedRoom] {
        var logger = Logger(label: "lockstep.check")
        logger.logLevel = .error
        do {
            return try await PostgresRoomStorage.readRooms(url: url, app: app.name, timeout: timeout, logger: logger) {
                room, stored in
                CheckedRoom(room: room, stored: stored, app: app, undoDepth: undoDepth)
            }
        } catch {
            throw .storage(error)
        }
    }

    /// The last line: how many rooms were checked and how many would not load; those a server would migrate, and
    /// those whose log has no stored state.
    static func summary(of rooms: [CheckedRoom], app: App) -> String {
        let failed = rooms.count { $0.failure != nil }
        let migrated = rooms.count { $0.migratedFrom != nil }
        let unstated = rooms.count { $0.hasNoStoredState && $0.failure == nil }
        var text = "\(count(rooms.count, "room")) checked with the app \(app.name) (state version "
            + "\(app.evolution.version)): "
        text += failed == 0 ? "every room loads" : "\(count(failed, "room")) cannot be loaded"
        if migrated > 0 {
            text += "; \(migrated) of those that load would be migrated from an older state version"
        }
        if unstated > 0 {
            text += "; \(unstated) of those that load \(unstated == 1 ? "has" : "have") changes"
                + " but no stored state, "
                + "replayed onto this app's initial state, where a State changed without a migration does not show"
        }
        return text
    }

    private static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}

import ArgumentParser
import CustomDump
import Foundation
import LockstepApps
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepTransport
import OrderedCollections

/// `lockstep replay`: sends a recording's changes to a room again and checks every version, so a changed reducer
/// can be tried against what production did.
struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay a recording (GET /rooms/ROOM/log) into a room, checking the state after every change.",
        discussion: """
            Sends the recording's actions, undos, redos and reverts in order (changes made by effects are not \
            sent: the server's own effects must make them) and checks after each that the room reached the \
            recorded state. Exits with status 1 at the first difference, naming the version, with a diff.

            The room must start at the recording's first state: a fresh counter or todos room with a recording \
            from version 0 (GET /rooms/ROOM/log?after=0), or a fresh json room with any recording (its first \
            change sets the recorded state).
            """
    )

    @Argument(help: "The recording: NDJSON from GET /rooms/ROOM/log ('-' reads standard input).")
    var recording: String

    @Option(help: "The room to replay into: ws:// or wss://HOST:PORT/rooms/ROOM (a query such as ?token= is kept).")
    var url: String

    @Option(help: "A PEM file of certificates to trust for wss:// besides the system's (e.g. a self-signed one).")
    var caFile: String?

    @Option(help: "How long to wait for each change to reach the room: 10s, 1m.")
    var timeout = Duration.seconds(10)

    @Option(help: "The room's app: a recording made under an older state version of it is migrated first.")
    var app: String?

    func run() async throws {
        let bytes: [UInt8]
        do {
            let data =
                recording == "-"
                ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: recording))
            bytes = Array(data)
        } catch {
            throw ValidationError("cannot read \(recording): \(error.localizedDescription)")
        }
        var recording: Recording
        do {
            recording = try Recording(ndjson: bytes)
            if let app {
                guard let found = CommandApps.named(app) else {
                    throw ValidationError("unknown app '\(app)'; choose one of: \(CommandApps.names)")
                }
                recording = try recording.migrated(by: found.evolution)
            }
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("\(self.recording): \(error)")
        }

        let transport = try WebSocketClient(trustedCertificatesFile: caFile)
        let room = try RoomClient(url: url, name: "replay", transport: transport)
        try await room.connect()
        let mirror = ReplayMirror()
        let following = Task { await mirror.follow(room) }
        let outcome: Result<Int, ReplayFailure>
        do {
            outcome = .success(try await replay(recording, into: room, mirror: mirror))
        } catch let failure as ReplayFailure {
            outcome = .failure(failure)
        }
        await room.close()
        await following.value

        switch outcome {
        case .success(let offset):
            let last = recording.steps.last?.version ?? recording.version
            print(
                "replayed \(recording.steps.count) changes (versions \(recording.version + 1) to \(last)) "
                    + "into \(room.room): every state matches\(offset == 0 ? "" : " (room versions shifted by \(offset))")")
        case .failure(let failure):
            FileHandle.standardError.write(Data((failure.description + "\n").utf8))
            throw ExitCode(1)
        }
    }

    /// Replays every step; returns the room's version minus the recording's (non-zero when the room was seeded).
    private func replay(_ recording: Recording, into room: RoomClient, mirror: ReplayMirror) async throws -> Int {
        let offset = try await start(room, at: recording)
        var recorded = recording.state
        for step in recording.steps {
            let version = step.version
            do {
                try step.ops.apply(to: &recorded)
            } catch {
                throw ReplayFailure(version: version, message: "the recording's own patch does not apply: \(error)")
            }
            guard !step.cause.mine else {
                throw ReplayFailure(
                    version: version,
                    message: "the recording takes back one client's own change (undo or redo with mine), which a "
                        + "replay through one connection cannot repeat; check it with RecordingReplay instead")
            }
            let reached: Int
            do {
                switch step.cause.kind {
                case .effect:
                    reached = version + offset
                case .action, .timer, .join, .leave:
                    guard let action = step.cause.action else {
                        throw ReplayFailure(version: version, message: "the recorded action is missing")
                    }
                    reached = try await room.send(action: action)
                case .undo:
                    reached = try await room.undo()
                case .redo:
                    reached = try await room.redo()
                case .revert:
                    guard let target = step.cause.to, target >= recording.version else {
                        throw ReplayFailure(
                            version: version,
                            message: "the revert goes back before the recording's first version; record from ?after=0")
                    }
                    reached = try await room.revert(to: target + offset)
                }
            } catch let error as RoomClientError {
                throw ReplayFailure(
                    version: version, message: "the room refused the recorded \(step.cause.kind): \(error)")
            }
            guard let state = await mirror.state(at: version + offset, timeout: timeout) else {
                throw ReplayFailure(version: version, message: "the room did not reach this version within \(timeout)")
            }
            guard reached == version + offset else {
                throw ReplayFailure(
                    version: version,
                    message: "the recording changed the state here, the room did not" + Self.difference(recorded, state))
            }
            guard state == recorded else {
                throw ReplayFailure(version: version, message: "the state differs" + Self.difference(recorded, state))
            }
        }
        return offset
    }

    /// Checks that the room starts at the recording's first state, seeding a fresh json room with it; returns the
    /// room's version minus the recording's.
    private func start(_ room: RoomClient, at recording: Recording) async throws -> Int {
        var state = await room.state
        var version = await room.version
        if state != recording.state, version == 0, state == [:] {
            // A fresh json room: one patch puts the recorded state in place.
            let seed: JSON = ["type": "patch", "ops": [["op": "replace", "path": "", "value": recording.state]]]
            if let seeded = try? await room.send(action: seed) {
                version = seeded
                state = await room.state
            }
        }
        guard state == recording.state else {
            throw ReplayFailure(
                version: recording.version,
                message: """
                    the room (at version \(version)) is not at the recording's first state. Replay into a fresh \
                    room: a counter or todos room with a recording from version 0 (GET /rooms/ROOM/log?after=0), \
                    or a json room with any recording
                    """ + Self.difference(recording.state, state))
        }
        return version - recording.version
    }

    /// A readable diff of the recorded (−) and the room's (+) state.
    static func difference(_ recorded: JSON, _ actual: JSON) -> String {
        guard let text = diff(recorded.dumpable, actual.dumpable) else { return "" }
        return ":\n\(text)\n(− recorded, + room)"
    }
}

/// The first difference between a recording and the room it is replayed into.
struct ReplayFailure: Error, CustomStringConvertible {
    let version: Int
    let message: String

    var description: String { "version \(version): \(message)" }
}

extension JSON {
    /// The value as Swift dictionaries, arrays and scalars, which custom-dump prints and diffs readably.
    fileprivate var dumpable: Any {
        switch self {
        case .null: return Optional<Int>.none as Any
        case .bool(let value): return value
        case .int(let value): return value
        case .double(let value): return value
        case .string(let value): return value
        case .array(let elements): return elements.map(\.dumpable)
        case .object(let object):
            var members: [String: Any] = [:]
            for (key, value) in object { members[key] = value.dumpable }
            return members
        }
    }
}

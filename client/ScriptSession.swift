import Foundation
import LockstepClient
import LockstepCore
import LockstepJSON

/// The non-interactive client: runs commands one after another and prints every update and answer as one JSON
/// line, so scripts and tests can read what happened without parsing a screen.
@MainActor
final class ScriptSession {
    private let room: RoomClient
    private let url: String
    private let app: AppKind?
    /// True with --keep: an action is done once it is kept (it outlives the process); the session ends when every
    /// kept one was applied.
    private let kept: Bool
    private let frame: ViewFrame
    private var printedVersion = -1
    private var updatesEnded = false
    private var waiters: [(version: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(room: RoomClient, url: String, app: AppKind?, kept: Bool = false) {
        self.room = room
        self.kept = kept
        self.url = url
        self.app = app
        frame = ViewFrame(path: room.path)
    }

    /// Commands from `--exec`: split on `;`.
    nonisolated static func commands(from text: String) -> AsyncStream<String> {
        let lines = text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        return AsyncStream { continuation in
            for line in lines { continuation.yield(line) }
            continuation.finish()
        }
    }

    /// Commands from stdin, one a line, read on a thread of their own so updates keep printing meanwhile.
    nonisolated static func standardInputLines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            while let line = readLine(strippingNewline: true) { continuation.yield(line) }
            continuation.finish()
        }
        thread.start()
        return stream
    }

    /// Runs every command, then closes; returns the exit status (2 when a command failed).
    func run(commands: AsyncStream<String>) async -> Int32 {
        let printer = Task { @MainActor in
            for await update in room.updates { self.print(update) }
            self.updatesEnded = true
            self.releaseWaiters()
        }
        var failed = false
        let mirror = room.mirror
        if kept, await room.hasState || mirror.pendingCount > 0 {
            // What a kept client shows before any network is there.
            emit([
                "event": "restored", "version": .int(mirror.version), "pending": .int(mirror.pendingCount),
                "state": mirror.state,
            ])
        }
        loop: for await line in commands {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let view = await room.state
            let kind = frame.app(forcing: app, view: view)
            let command: Command
            do {
                command = try Command(parsing: trimmed, app: kind, state: frame.room(holding: view))
            } catch {
                emit(["event": "error", "command": .string(trimmed), "code": "usage", "message": .string("\(error)")])
                failed = true
                continue
            }
            do {
                switch command {
                case .quit:
                    break loop
                case .help:
                    let lines = AppKind.commonHelp + kind.helpLines
                    emit(["event": "help", "lines": .array(lines.map(JSON.string))])
                case .history(let limit):
                    let entries = try await room.history(limit: limit)
                    let list = entries.map { JSON.object(["version": .int($0.version), "cause": $0.cause.json]) }
                    emit(["event": "history", "command": .string(trimmed), "entries": .array(list)])
                case .view(let version):
                    let state = try await PastState.fetch(roomURL: url, version: version, path: frame.path)
                    emit(["event": "view", "command": .string(trimmed), "version": .int(version), "state": state])
                case .later(let seconds, let name, let action):
                    let timer = try await room.send(
                        action: action, after: .milliseconds(Int(seconds * 1000)), timer: name)
                    emit([
                        "event": "scheduled", "command": .string(trimmed), "timer": .string(timer.name),
                        "due": timer.due.map { .int(TimerListing.milliseconds($0)) } ?? .null,
                    ])
                case .cancel(let name):
                    try await room.cancel(timer: name)
                    emit(["event": "cancelled", "command": .string(trimmed), "timer": .string(name)])
                case .timers:
                    let timers = try await TimerListing.fetch(roomURL: url)
                    emit(["event": "timers", "command": .string(trimmed), "timers": .array(timers)])
                case .action(let action) where kept:
                    try await room.enqueue(action: action)
                    emit(["event": "kept", "command": .string(trimmed), "pending": .int(await room.pendingCount)])
                case .undo, .redo, .revert, .action:
                    let version: Int
                    switch command {
                    case .undo(let mine): version = try await room.undo(mine: mine)
                    case .redo(let mine): version = try await room.redo(mine: mine)
                    case .revert(let target): version = try await room.revert(to: target)
                    case .action(let action): version = try await room.send(action: action)
                    default: continue
                    }
                    // A view's mirror may stay behind the ack: the change did not touch it, so it has no patch.
                    await printed(min(version, await room.version))
                    emit(["event": "ack", "command": .string(trimmed), "version": .int(version)])
                }
            } catch {
                var line: JSONObject = ["event": "error", "command": .string(trimmed)]
                if case .server(let code, let message)? = error as? RoomClientError {
                    line["code"] = .string(code)
                    line["message"] = .string(message)
                } else {
                    line["code"] = "client"
                    line["message"] = .string("\(error)")
                }
                emit(.object(line))
                failed = true
            }
        }
        if kept {
            // Kept actions are done once the server applied them; the kept state once the server was reached.
            while await room.pendingCount > 0 || room.mirror.status != .live, await room.status != .closed {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        await room.close()
        await printer.value
        return failed ? 2 : 0
    }

    /// Waits until the update carrying `version` has been printed, so an ack never precedes its patch.
    private func printed(_ version: Int) async {
        guard !updatesEnded, printedVersion < version else { return }
        await withCheckedContinuation { continuation in waiters.append((version, continuation)) }
    }

    private func releaseWaiters() {
        let ready = waiters.filter { updatesEnded || $0.version <= printedVersion }
        waiters.removeAll { updatesEnded || $0.version <= printedVersion }
        for waiter in ready { waiter.continuation.resume() }
    }

    private func print(_ update: RoomUpdate) {
        // The outbox is the script's own commands, whose acks it prints.
        if case .outbox = update.change { return }
        emit(Self.line(for: update))
        printedVersion = update.version
        releaseWaiters()
    }

    /// The JSON line for one update.
    static func line(for update: RoomUpdate) -> JSON {
        switch update.change {
        case .snapshot:
            return [
                "event": "snapshot", "room": .string(update.room), "you": update.you.map(JSON.string) ?? .null,
                "version": .int(update.version), "state": update.state,
                "undo": .int(update.undoCount), "redo": .int(update.redoCount),
            ]
        case .resumed:
            return ["event": "resumed", "version": .int(update.version)]
        case .patch(let ops, let cause, let changed):
            return [
                "event": "patch", "version": .int(update.version), "ops": ops.json, "cause": cause.json,
                "changed": .array(changed.map { .string($0.description) }),
                "undo": .int(update.undoCount), "redo": .int(update.redoCount), "state": update.state,
            ]
        case .presence(let joined, let left):
            return [
                "event": "presence",
                "peers": .array(update.peers.map(\.json)),
                "joined": .array(joined.map { .string($0.name) }),
                "left": .array(left.map { .string($0.name) }),
            ]
        case .status(let status):
            return ["event": "status", "status": .string(status.description)]
        case .serverError(let code, let message):
            return ["event": "error", "code": .string(code), "message": .string(message)]
        case .outbox:
            return ["event": "outbox", "pending": .int(update.pendingCount)]
        }
    }

    private func emit(_ json: JSON) {
        FileHandle.standardOutput.write(Data((json.serialized(prettyPrinted: false) + "\n").utf8))
    }
}

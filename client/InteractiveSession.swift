import Dispatch
import Foundation
import LockstepClient
import LockstepCore
import LockstepJSON
#if canImport(Glibc)
import Glibc
#endif

/// The full-screen client: mirrors the room into the screen model, reads keys on a thread of its own, and runs each
/// submitted command as a request whose errors land in the log.
@MainActor
final class InteractiveSession {
    private let room: RoomClient
    private let url: String
    private let forcedApp: AppKind?
    private let name: String?
    private let frame: ViewFrame
    private var app: AppKind = .json
    private var latest: RoomUpdate?
    private var changed: [JSONPointer] = []
    private var log: [Screen.LogLine] = []
    private var narration = Narration()
    private var editor = LineEditor()
    private var hadSnapshot = false
    /// True with --keep: requests outlive the process, and the header says how many wait.
    private let kept: Bool
    private let screen = Screen(colors: ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
    /// Whether the others were last told this client is typing (a line is being edited).
    private var typing = false
    /// The latest presence change on its way to the client, so changes reach it in the order they were made.
    private var presenceChange: Task<Void, Never>?

    init(room: RoomClient, url: String, app: AppKind?, name: String?, kept: Bool) {
        self.room = room
        self.kept = kept
        self.url = url
        forcedApp = app
        self.name = name
        frame = ViewFrame(path: room.path)
        // A kept state shows before any network is there.
        let mirror = room.mirror
        if mirror.state != .null || app != nil {
            self.app = frame.app(forcing: app, view: mirror.state)
        }
    }

    func run() async -> Int32 {
        guard Terminal.enterFullScreen() else { return 1 }
        defer { Terminal.restore() }
        let updates = Task { @MainActor in
            for await update in room.updates {
                self.apply(update)
                self.draw()
            }
        }
        signal(SIGWINCH, SIG_IGN)
        let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .main)
        resize.setEventHandler { MainActor.assumeIsolated { self.draw() } }
        resize.resume()
        note("help lists the commands; Ctrl-C or Ctrl-D quits", .notice)
        let mirror = room.mirror
        if kept, mirror.state != .null || mirror.pendingCount > 0 {
            note("kept: v\(mirror.version), \(mirror.pendingCount) waiting to be sent", .notice)
        }
        draw()
        var decoder = Key.Decoder()
        reading: for await chunk in Self.keyChunks() {
            for key in decoder.feed(chunk) {
                switch editor.handle(key) {
                case .quit: break reading
                case .submitted(let line):
                    setTyping(false)
                    if execute(line) == .quit { break reading }
                case .edited: setTyping(!editor.text.isEmpty)
                case .ignored: break
                }
            }
            draw()
        }
        resize.cancel()
        await presenceChange?.value
        await room.close()
        await updates.value
        return 0
    }

    /// Tells the others whether a line is being edited (presence state `{"typing":true}`, cleared with null), once
    /// per change; the client sends at most one state per presence interval, the latest winning.
    private func setTyping(_ isTyping: Bool) {
        guard isTyping != typing else { return }
        typing = isTyping
        let previous = presenceChange
        let room = self.room
        presenceChange = Task {
            await previous?.value
            try? await room.setPresence(isTyping ? ["typing": true] : nil)
        }
    }

    // MARK: - Updates

    private func apply(_ update: RoomUpdate) {
        latest = update
        switch update.change {
        case .snapshot:
            app = frame.app(forcing: forcedApp, view: update.state)
            changed = []
            if hadSnapshot {
                note("snapshot at v\(update.version) (resynchronised)", .notice)
            } else {
                note(
                    "joined room \(update.room) at v\(update.version) as \(name.map { "\($0) " } ?? "")(\(update.you ?? "?"), app: \(app.rawValue))",
                    .plain)
            }
            hadSnapshot = true
        case .resumed:
            note("resumed at v\(update.version)", .notice)
        case .patch(_, let cause, let paths):
            changed = paths
            let mine = cause.client != nil && cause.client == update.you
            note(narration.describe(cause, version: update.version), mine ? .mine : .plain)
        case .presence(let joined, let left):
            narration.remember(update.peers)
            for peer in joined where peer.client != update.you { note("\(peer.name) joined", .plain) }
            for peer in left { note("\(peer.name) left", .plain) }
        case .status(let status):
            switch status {
            case .disconnected, .resynchronising: note(status.description, .notice)
            case .live, .connecting, .closed: break
            }
        case .serverError(let code, let message):
            note("server: \(message) (\(code))", .error)
        case .outbox:
            break
        }
    }

    // MARK: - Commands

    private func execute(_ line: String) -> Command? {
        guard line.contains(where: { !$0.isWhitespace }) else { return nil }
        let state = frame.predict(
            latest?.state ?? room.mirror.state, app: app,
            pending: latest?.pendingActions ?? room.mirror.pendingActions)
        let command: Command
        do {
            command = try Command(parsing: line, app: app, state: frame.room(holding: state))
        } catch {
            note("\(error)", .error)
            return nil
        }
        switch command {
        case .quit: return .quit
        case .help:
            for text in AppKind.commonHelp + app.helpLines { note(text, .notice) }
        case .history(let limit):
            request(line) { room in
                let entries = try await room.history(limit: limit)
                return entries.isEmpty
                    ? ["history is empty"] : entries.map { self.narration.describe($0.cause, version: $0.version) }
            }
        case .undo(let mine):
            request(line) { room in
                _ = try await room.undo(mine: mine); return []
            }
        case .redo(let mine):
            request(line) { room in
                _ = try await room.redo(mine: mine); return []
            }
        case .revert(let target):
            request(line) { room in
                let before = await room.version
                let version = try await room.revert(to: target)
                return version == before ? ["\(line): v\(target) is the current state; no change"] : []
            }
        case .view(let version):
            let url = self.url
            let path = frame.path
            request(line) { _ in
                let state = try await PastState.fetch(roomURL: url, version: version, path: path)
                return ["v\(version): \(state.serialized(prettyPrinted: false))"]
            }
        case .later(let seconds, let name, let action):
            request(line) { room in
                let timer = try await room.send(
                    action: action, after: .milliseconds(Int(seconds * 1000)), timer: name)
                return [TimerListing.describe(scheduled: timer.name, due: timer.due)]
            }
        case .cancel(let name):
            request(line) { room in
                try await room.cancel(timer: name)
                return ["timer \(name) cancelled"]
            }
        case .timers:
            let url = self.url
            request(line) { _ in
                let timers = try await TimerListing.fetch(roomURL: url)
                let now = TimerListing.milliseconds(Date())
                return timers.isEmpty ? ["no timers pending"] : timers.map { TimerListing.describe($0, now: now) }
            }
        case .action(let action):
            request(line) { room in
                let before = await room.version
                let version = try await room.send(action: action)
                if version == before { return ["\(line): no change"] }
                return await room.version < version ? ["\(line): v\(version), outside the view"] : []
            }
        }
        return command
    }

    /// Runs a request in the background; its answer lines, or its error in words, go to the log.
    private func request(
        _ line: String, _ body: @escaping @MainActor (RoomClient) async throws -> [String]
    ) {
        let room = self.room
        Task { @MainActor in
            do {
                for text in try await body(room) { self.note(text, .notice) }
            } catch RoomClientError.server(let code, let message) {
                self.note("\(line): \(message) (\(code))", .error)
            } catch {
                self.note("\(line): \(error)", .error)
            }
            self.draw()
        }
    }

    // MARK: - Screen

    private func note(_ text: String, _ style: Screen.LogLine.Style) {
        log.append(Screen.LogLine(text: text, style: style))
        if log.count > 500 { log.removeFirst(log.count - 500) }
    }

    private func draw() {
        let size = Terminal.size()
        let update = latest
        let mirror = room.mirror
        let peers = (update?.peers ?? []).map { $0.client == update?.you ? "\($0.name) (you)" : $0.name }
        var title = "lockstep  room \(room.room)" + (frame.path.isRoot ? "" : "  path \(frame.path)")
        let version = update?.version ?? mirror.version
        title += "  v\(version)  undo \(update?.undoCount ?? 0) redo \(update?.redoCount ?? 0)"
        title += "  [\(app.rawValue)]"
        let isLive = update?.status == .live
        let pending = update?.pendingCount ?? mirror.pendingCount
        var status = (update?.status ?? .connecting(failures: 0)).description
        if !isLive, kept {
            // Kept requests wait across restarts too, until the server answers.
            status = "offline, \(pending) waiting; " + status
        } else if !isLive, hadSnapshot {
            status = "offline, \(pending) pending; " + status
        } else if pending > 0 {
            status += ", \(pending) pending"
        }
        // Commands still work while the server is away: the screen shows their predicted effect.
        let state = frame.predict(
            update?.state ?? mirror.state, app: app, pending: update?.pendingActions ?? mirror.pendingActions)
        let content = Screen.Content(
            title: title,
            status: status,
            isLive: isLive,
            peers: "peers: " + peers.joined(separator: ", ")
                + (Narration.typing(update?.peers ?? [], you: update?.you).map { "  · \($0)" } ?? ""),
            state: StateView(state, changed: changed),
            log: log,
            prompt: editor.text,
            cursor: editor.cursor
        )
        Terminal.write(screen.render(content, rows: size.rows, columns: size.columns))
    }

    /// Raw key bytes from stdin, read on a thread of their own (reads block).
    private nonisolated static func keyChunks() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                continuation.yield(Array(buffer[..<count]))
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}

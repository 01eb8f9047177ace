import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepStorage
import Testing

/// A reducer whose `go` bumps, sends `bump` again, starts work, and schedules `bump` as the timer `later`.
private struct Chain: Reducer {
    enum Action: Codable, Equatable, Sendable {
        case go
        case bump
    }

    var initialState: Int { 0 }

    func reduce(into state: inout Int, action: Action) throws(Rejection) -> Effect<Action> {
        state += 1
        guard action == .go else { return .none }
        return .merge(.send(.bump), .run { _ in }, .schedule(.bump, after: .seconds(2), timer: "later"))
    }
}

/// A room's turns decided with no server, no storage and no clock: each input's outputs, in order.
struct RoomEngineTests {
    static let time = RoomEngine.Time(milliseconds: 1_000, markSeconds: 1)
    static let rules = RoomEngine.Rules(
        guarded: .none, sessionWrites: SessionWrites(idleSeconds: 60, limit: 10), maxTimers: 2)
    static let alice = RoomEngine.Source(
        client: "c1", sender: Sender(client: "c1", session: "s1"), subject: nil, session: "s1")

    static func engine(_ app: App = .counter) -> RoomEngine {
        RoomEngine(name: "r", store: app.makeStore(undoDepth: 10), resumeWindow: 4, recent: [], parts: .none)
    }

    static func request(_ id: String, seq: Int? = nil, timer: TimerRequest? = nil) -> RoomEngine.Input {
        .request(
            ClientRequest(message: .action(id: id, action: ["type": "increment"]), seq: seq, timer: timer),
            from: alice)
    }

    /// Each output's kind, to compare orders: `commit@1`, `mark:s1`, `ack@1`, `scheduled:t`, `timers+t`, `wait`...
    static func kinds(_ turn: RoomEngine.Turn) -> [String] {
        turn.outputs.map { output in
            switch output {
            case .commit(let commit): "commit@\(commit.change.version)"
            case .mark(let mark): "mark:\(mark.session)"
            case .timers(let scheduled, let gone):
                scheduled.map { "timers+\($0.name)" }.joined() + gone.map { "timers-\($0.name)" }.joined()
            case .wait: "wait"
            case .answer(.ack(_, let version, let duplicate)): duplicate ? "duplicate@\(version)" : "ack@\(version)"
            case .answer(.scheduled(_, let timer, _)): "scheduled:\(timer)"
            case .answer(.error(_, let code, _)): "error:\(code)"
            case .answer(.message): "message"
            case .run: "run"
            case .notice(_, _, _, let client): "notice:\(client ?? "-")"
            }
        }
    }

    @Test func anActionIsCommittedThenItsMarkMovesThenItIsAnsweredAndASecondSendIsADuplicate() {
        var engine = Self.engine()
        var timers = TimerSchedule()
        let first = engine.take(
            Self.request("a1", seq: 1), at: Self.time, epoch: "e", rules: Self.rules, timers: &timers)
        #expect(first.applied && first.actions == 1 && Self.kinds(first) == ["commit@1", "mark:s1", "ack@1"])
        #expect(engine.store.version == 1 && engine.timeline.oldestVersion == 1 && engine.marks.covers(1, of: "s1"))
        guard case .commit(let commit) = first.outputs.first else { return }
        #expect(commit.encoded.cause.client == "c1" && commit.patch.version == 1)

        let again = engine.take(
            Self.request("a1", seq: 1), at: Self.time, epoch: "e", rules: Self.rules, timers: &timers)
        #expect(!again.applied && again.actions == 0 && Self.kinds(again) == ["duplicate@1"])
        #expect(engine.store.version == 1)
    }

    @Test func aTimerIsStoredWhenScheduledAndFiresOnceWithItsRowsRemovalInTheSameTurn() throws {
        var engine = Self.engine()
        var timers = TimerSchedule()
        let scheduled = engine.take(
            Self.request("t1", seq: 1, timer: TimerRequest(after: 500, name: "t")), at: Self.time, epoch: "e",
            rules: Self.rules, timers: &timers)
        #expect(Self.kinds(scheduled) == ["timers+t", "wait", "mark:s1", "scheduled:t"])
        #expect(engine.store.version == 0 && timers.armed == 1_500 && scheduled.actions == 0)
        let timer = try #require(timers.book.timer(TimerKey(room: "r", name: "t")))

        let fired = engine.take(.timer(timer), at: Self.time, epoch: "e", rules: Self.rules, timers: &timers)
        // Nobody waits for a timer's answer: no mark, no ack.
        #expect(Self.kinds(fired) == ["wait", "timers-t", "commit@1"] && fired.actions == 1)
        guard case .commit(let commit) = fired.outputs.last else { return }
        #expect(commit.encoded.cause.kind == .timer && commit.encoded.cause.timer == "t")
        #expect(commit.encoded.cause.client == "c1")

        let twice = engine.take(.timer(timer), at: Self.time, epoch: "e", rules: Self.rules, timers: &timers)
        #expect(twice.outputs.isEmpty && engine.store.version == 1)
    }

    @Test func onSeveralServersATimerFiresOnlyIfTheLockedWriteFoundItsRow() throws {
        var engine = Self.engine()
        var timers = TimerSchedule()
        _ = engine.take(
            Self.request("t1", timer: TimerRequest(after: 0, name: "t")), at: Self.time, epoch: "e", rules: Self.rules,
            timers: &timers)
        let timer = try #require(timers.book.timer(TimerKey(room: "r", name: "t")))
        // Another server fired or cancelled it: the write's lock read no row of it.
        engine.loggedTimers = [:]
        let fired = engine.take(.timer(timer), at: Self.time, epoch: "e", rules: Self.rules, timers: &timers)
        #expect(Self.kinds(fired) == ["wait"] && engine.store.version == 0)
        #expect(timers.book.timer(TimerKey(room: "r", name: "t")) == nil)
    }

    @Test func theTimerLimitRefusesANewNameButNotAReplacement() {
        var engine = Self.engine()
        var timers = TimerSchedule()
        func schedule(_ name: String) -> [String] {
            Self.kinds(
                engine.take(
                    Self.request(name, timer: TimerRequest(after: 100, name: name)), at: Self.time, epoch: "e",
                    rules: Self.rules, timers: &timers))
        }
        #expect(schedule("a") == ["timers+a", "wait", "scheduled:a"])
        #expect(schedule("b") == ["timers+b", "wait", "scheduled:b"])
        #expect(schedule("c") == ["error:rejected"])
        #expect(schedule("a") == ["timers+a", "wait", "scheduled:a"])
        #expect(timers.book.count(in: "r") == 2)
    }

    @Test func anActionMadeForSomeoneAnswersNobodyAndItsRefusalIsTheOperatorsNotice() {
        var engine = Self.engine()
        var timers = TimerSchedule()
        let bob = Sender(client: "c2")
        let joined = engine.take(
            .membership(["type": "increment"], bob, .join), at: Self.time, epoch: "e", rules: Self.rules,
            timers: &timers)
        #expect(Self.kinds(joined) == ["commit@1"])
        guard case .commit(let commit) = joined.outputs.first else { return }
        #expect(commit.encoded.cause.kind == .join && commit.encoded.cause.client == "c2")

        let refused = engine.take(
            .membership(["type": "no such action"], bob, .leave), at: Self.time, epoch: "e", rules: Self.rules,
            timers: &timers)
        #expect(Self.kinds(refused) == ["notice:c2"] && engine.store.version == 1)
    }

    @Test func anEffectsSentActionAndTimerAreTheTurnsOwnAndItsWorkIsStartedByTheServer() {
        var engine = Self.engine(App("chain", summary: "effects", reducer: Chain()))
        var timers = TimerSchedule()
        let turn = engine.take(
            .request(ClientRequest(message: .action(id: "g", action: ["go": [:]]), seq: 1), from: Self.alice),
            at: Self.time, epoch: "e", rules: Self.rules, timers: &timers)
        // The request's change and answer, then its effects in order: the sent action's change, the work, the timer.
        #expect(
            Self.kinds(turn) == ["commit@1", "mark:s1", "ack@1", "commit@2", "run", "timers+later", "wait"])
        guard case .commit(let sent) = turn.outputs[3] else { return }
        #expect(sent.encoded.cause.kind == .effect && engine.store.version == 2)
        #expect(timers.book.timer(TimerKey(room: "r", name: "later"))?.due == 3_000)
    }

    @Test func aWriteIntoSomeoneElsesPrivatePartIsRefusedAndItsReasonSaysWhereNotWhat() throws {
        var engine = Self.engine(.json)
        var timers = TimerSchedule()
        var rules = Self.rules
        rules.guarded = try PrivateParts(["/hands/{sub}"])
        let write: JSON = ["type": "patch", "ops": [["op": "add", "path": "/hands/bob", "value": "secret"]]]
        let turn = engine.take(
            .request(ClientRequest(message: .action(id: "w", action: write)), from: Self.alice), at: Self.time,
            epoch: "e", rules: rules, timers: &timers)
        #expect(Self.kinds(turn) == ["error:forbidden"] && engine.store.version == 0)
    }
}

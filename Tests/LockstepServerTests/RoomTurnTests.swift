import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepStorage
import Testing

/// A request's turn decided with no server: what is answered instead of applied, what each kind of request makes of a
/// real store, and where the marks move.
struct RoomTurnTests {
    static let alice = Sender(client: "c1", session: "s1")
    static let increment: JSON = ["type": "increment"]

    static func context(_ store: any RoomStore, sender: Sender = alice) -> ReducerContext {
        ReducerContext(sender: sender, time: 1_000 + store.version, version: store.version + 1, epoch: "e")
    }

    static let writes = SessionWrites(idleSeconds: 60, limit: 10)

    /// The marks `answer` moves in room "r", at time 0.
    static func moved(
        by answer: RequestAnswer, seq: Int? = nil, session: String? = nil, key: Idempotency? = nil,
        marks: inout SessionMarks
    ) -> [StoredMark] {
        RoomTurn.marksMoved(
            by: answer, seq: seq, session: session, idempotency: key, in: "r", marks: &marks, now: 0, writes: writes)
    }

    @Test func aSeqTheMarkCoversIsAnsweredAsADuplicateAndOneWithoutASessionRefused() {
        var marks = SessionMarks()
        let moved = Self.moved(by: .ack(id: "a3", version: 7), seq: 3, session: "s1", marks: &marks)
        #expect(moved.map(\.seq) == [3] && moved.map(\.session) == ["s1"] && moved.map(\.room) == ["r"])
        let answer = { (seq: Int, session: String?) in
            RoomTurn.answerInstead(
                of: ClientRequest(message: .action(id: "a\(seq)", action: Self.increment), seq: seq), session: session,
                idempotency: nil, marks: marks, version: 7)
        }

        let old = answer(2, "s1")
        guard case .ack("a2", 7, true)? = old else { Issue.record("\(String(describing: old))"); return }
        #expect(answer(4, "s1") == nil)
        #expect(answer(2, "s2") == nil)
        let sessionless = answer(1, nil)
        guard case .error("a1", "bad_message", _)? = sessionless else {
            Issue.record("\(String(describing: sessionless))")
            return
        }
        let unnumbered = ClientRequest(message: .action(id: "x", action: Self.increment))
        #expect(RoomTurn.answerInstead(of: unnumbered, session: nil, idempotency: nil, marks: marks, version: 7) == nil)
    }

    @Test func aUsedIdempotencyKeyGetsItsFirstAnswerOrAMismatch() throws {
        let body = Array(#"{"type":"action","action":{"type":"increment"}}"#.utf8)
        let key = try #require(Idempotency(key: "pay-1", body: body))
        let request = ClientRequest(message: .action(id: "h", action: Self.increment))
        var marks = SessionMarks()
        #expect(RoomTurn.answerInstead(of: request, session: nil, idempotency: key, marks: marks, version: 0) == nil)

        let moved = Self.moved(by: .ack(id: "h", version: 5), key: key, marks: &marks)
        #expect(moved.map(\.session) == [key.markName] && moved.first?.answer != nil)
        let again = RoomTurn.answerInstead(of: request, session: nil, idempotency: key, marks: marks, version: 9)
        guard case .ack("h", 5, true)? = again else { Issue.record("\(String(describing: again))"); return }

        let other = try #require(Idempotency(key: "pay-1", body: Array(#"{"type":"undo"}"#.utf8)))
        let mismatch = RoomTurn.answerInstead(of: request, session: nil, idempotency: other, marks: marks, version: 9)
        guard case .error("h", "idempotency_mismatch", _)? = mismatch else {
            Issue.record("\(String(describing: mismatch))")
            return
        }
    }

    @Test func onlyWhatTookEffectMovesASessionAndOnlyUnavailableLeavesAKeyFree() throws {
        let key = try #require(Idempotency(key: "k", body: Array(#"{"type":"undo"}"#.utf8)))
        var marks = SessionMarks()
        let refused = RequestAnswer.error(id: "a", code: "rejected", message: "no")
        #expect(Self.moved(by: refused, seq: 1, session: "s1", marks: &marks).isEmpty)
        #expect(!marks.covers(1, of: "s1"))
        let unavailable = RequestAnswer.error(id: "a", code: "unavailable", message: RequestAnswer.unavailable)
        #expect(Self.moved(by: unavailable, key: key, marks: &marks).isEmpty)
        #expect(marks.answer(for: key.markName) == nil)

        let kept = Self.moved(by: refused, key: key, marks: &marks)
        #expect(kept.map(\.session) == [key.markName])
        let again = RoomTurn.answerInstead(
            of: ClientRequest(message: .undo(id: "b")), session: nil, idempotency: key, marks: marks, version: 4)
        guard case .error("b", "rejected", _)? = again else { Issue.record("\(String(describing: again))"); return }

        let scheduled = RequestAnswer.scheduled(id: "t", timer: "tick", due: nil)
        let both = Self.moved(by: scheduled, seq: 2, session: "s2", key: key, marks: &marks)
        #expect(both.map(\.session) == ["s2", key.markName] && marks.covers(2, of: "s2"))
    }

    @Test func eachKindOfRequestMakesItsChangeWithItsCause() throws {
        var store = App.counter.makeStore(undoDepth: 10)
        let action = try #require(
            try RoomTurn.perform(
                .action(id: "a", action: Self.increment), client: "c1", on: &store, context: Self.context(store)))
        #expect(action.change?.version == 1)
        #expect(action.cause?.action == Self.increment && action.cause?.id == "a" && action.cause?.client == "c1")

        let timer = try #require(
            try RoomTurn.perform(
                .action(id: "t", action: Self.increment), client: "c1", as: .timer, timer: "tick", on: &store,
                context: Self.context(store)))
        #expect(timer.cause?.kind == .timer && timer.cause?.timer == "tick")

        let undo = try #require(
            try RoomTurn.perform(.undo(id: "u"), client: "c2", on: &store, context: Self.context(store)))
        #expect(undo.change?.version == 3 && undo.cause?.action == nil && undo.cause?.client == "c2")
        #expect(try store.stateJSON() == ["count": 1])

        let history = try RoomTurn.perform(
            .history(id: nil, limit: nil), client: nil, on: &store, context: Self.context(store))
        #expect(history == nil)
        let redo = try RoomTurn.perform(.redo(id: "r"), client: "c1", on: &store, context: Self.context(store))
        #expect(redo?.change?.version == 4)
        #expect(throws: StoreError.self, "nothing left to redo") {
            try RoomTurn.perform(.redo(id: "r"), client: "c1", on: &store, context: Self.context(store))
        }
    }

    @Test func theEncodedPatchCarriesTheStampedCauseAndTheRecordItsInverse() throws {
        var store = App.counter.makeStore(undoDepth: 10)
        let context = Self.context(store)
        let performed = try #require(
            try RoomTurn.perform(.action(id: "a", action: Self.increment), client: "c1", on: &store, context: context))
        let change = try #require(performed.change)
        let patch = RoomTurn.patch(
            of: change, cause: try #require(performed.cause), context: context, history: store.history)
        #expect(patch.cause.at == context.time)
        guard case .patch(1, let ops, let cause, 1, 0) = try ServerMessage(json: JSON(parsing: patch.bytes)) else {
            Issue.record("not the patch of version 1")
            return
        }
        #expect(ops == change.patch && cause == patch.cause)
        #expect(patch.record.inverse == change.inverse)
    }

    /// `count` increments on `store`, as stored rows, each recorded in `timeline`.
    static func increments(
        _ count: Int, on store: inout any RoomStore, timeline: inout RoomTimeline
    ) throws -> [StoredChange] {
        var rows: [StoredChange] = []
        for _ in 1...count {
            let context = Self.context(store)
            let performed = try #require(
                try RoomTurn.perform(
                    .action(id: nil, action: Self.increment), client: "c1", on: &store, context: context))
            let change = try #require(performed.change)
            let patch = RoomTurn.patch(
                of: change, cause: try #require(performed.cause), context: context, history: store.history)
            rows.append(
                StoredChange(
                    room: "r", version: change.version, message: patch.bytes, record: patch.record.serialized()))
            timeline.record(version: change.version, inverse: change.inverse, stored: change.version)
        }
        return rows
    }

    @Test func aRevertRebuildsThePastFromTheTimelineAndThenTheLog() throws {
        var store = App.counter.makeStore(undoDepth: 10)
        var timeline = RoomTimeline(window: 2)
        let rows = try Self.increments(5, on: &store, timeline: &timeline)
        // The timeline holds versions 4 and 5 only: version 1 needs the log's 2 and 3.
        #expect(timeline.oldestVersion == 4)
        #expect(throws: TimeTravelError.self) {
            try RoomTurn.revert(
                to: 1, id: "v", client: "c1", on: &store, timeline: timeline, older: [], context: Self.context(store))
        }
        let revert = try RoomTurn.revert(
            to: 1, id: "v", client: "c1", on: &store, timeline: timeline, older: Array(rows[1...2]),
            context: Self.context(store))
        #expect(revert.change?.version == 6 && revert.cause?.id == "v" && revert.cause?.action == nil)
        #expect(try store.stateJSON() == ["count": 1])
        let again = try RoomTurn.revert(
            to: 6, id: "w", client: "c1", on: &store, timeline: timeline, older: [], context: Self.context(store))
        #expect(again.change == nil, "the state is already that")
        #expect(throws: TimeTravelError.self) {
            try RoomTurn.revert(
                to: 9, id: "x", client: "c1", on: &store, timeline: timeline, older: [], context: Self.context(store))
        }
    }
}

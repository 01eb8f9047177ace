import LockstepStorage
import Testing

@testable import LockstepServer

/// The group commit's decisions (`DurabilityQueue+GroupCommit.swift`), without a log: one write at a time, what
/// arrives meanwhile in the next, and what a write's return lets out.
struct GroupCommitStepTests {
    /// A patch or a reply of a room, named for the checks.
    struct Held: HeldRelease, Equatable {
        let roomName: String
        let isReply: Bool
        let label: String
    }

    let sessions = SessionWrites(idleSeconds: 60, limit: 100)

    func row(_ room: String, _ version: Int) -> StoredChange {
        StoredChange(room: room, version: version, message: [], record: [])
    }

    func patch(_ room: String, _ label: String) -> Held { Held(roomName: room, isReply: false, label: label) }
    func reply(_ room: String, _ label: String) -> Held { Held(roomName: room, isReply: true, label: label) }

    @Test func oneWriteAtATimeAndWhatArrivesMeanwhileGoesInTheNext() throws {
        let queue = DurabilityQueue<Held>()
        queue.append(row("a", 1), holding: patch("a", "a1"), snapshots: [])
        #expect(queue.writeWanted())
        queue.append(row("a", 2), holding: patch("a", "a2"), snapshots: [])
        // Asked for already: the same write takes both.
        #expect(!queue.writeWanted())
        guard case .write(let rows, _, _) = queue.startWrite(sessions: sessions) else {
            Issue.record("no write started")
            return
        }
        #expect(rows.map(\.version) == [1, 2])
        queue.append(row("a", 3), holding: patch("a", "a3"), snapshots: [])
        // In flight: no second write until it returns.
        #expect(!queue.writeWanted())
        #expect(queue.startWrite(sessions: sessions) == nil)
        guard case .stored(let released) = queue.writeReturned(stored: true, sessions: sessions) else {
            Issue.record("not stored")
            return
        }
        #expect(released.map(\.label) == ["a1", "a2"])
        guard case .write(let next, _, _) = queue.startWrite(sessions: sessions) else {
            Issue.record("the change that arrived meanwhile was not written")
            return
        }
        #expect(next.map(\.version) == [3])
        _ = queue.writeReturned(stored: true, sessions: sessions)
        // Nothing left to write: what waited only for the write goes out, and the queue is idle.
        queue.pending.append(reply("b", "b-answer"))
        guard case .release(let items) = queue.startWrite(sessions: sessions) else {
            Issue.record("the reply was not released")
            return
        }
        #expect(items.map(\.label) == ["b-answer"])
        #expect(queue.isIdle && !queue.hasWrites && !queue.writeScheduled)
    }

    @Test func aRefusedWriteTakesBackItsRoomsAndLetsOnlyOtherRoomsRepliesOut() throws {
        let queue = DurabilityQueue<Held>()
        queue.append(row("a", 1), holding: patch("a", "a1"), snapshots: [])
        queue.pending.append(reply("a", "a-answer"))
        queue.pending.append(reply("b", "b-answer"))
        queue.timersChanged(scheduled: [], gone: [TimerKey(room: "c", name: "t")])
        guard case .write(_, _, let taken) = queue.startWrite(sessions: sessions) else {
            Issue.record("no write started")
            return
        }
        // Queued during the write: room a's next change goes with the write's failure, room b's stays.
        queue.append(row("a", 2), holding: patch("a", "a2"), snapshots: [])
        queue.append(row("b", 1), holding: patch("b", "b1"), snapshots: [])
        guard case .failed(let released, let rooms, let written) = queue.writeReturned(stored: false, sessions: taken)
        else {
            Issue.record("the refused write was stored")
            return
        }
        #expect(rooms == ["a", "c"])
        #expect(released.map(\.label) == ["b-answer"])
        #expect(written.map(\.label) == ["a1", "a-answer", "b-answer"])
        #expect(queue.rows.map(\.room) == ["b"])
        #expect(queue.pending.map(\.label) == ["b1"])
    }
}

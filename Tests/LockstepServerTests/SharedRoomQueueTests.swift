@testable import LockstepServer
import LockstepStorage
import Testing

/// A room's turns in a shared log: what a write takes, where replies go, and what becomes of a failed write's batch.
@Suite struct SharedRoomQueueTests {
    /// An input: from a connection (or none), with the mark its write reads.
    struct Input: BatchInput, Equatable {
        let name: String
        var connection: Int?
        var markName: String?
        var session: String?
        var seq: Int?

        var sessionSeq: (session: String, seq: Int)? {
            guard let session, let seq else { return nil }
            return (session, seq)
        }
    }

    typealias Queue = SharedRoomQueue<Input, String>

    static func input(_ name: String, from connection: Int? = nil, mark: String? = nil) -> Input {
        Input(name: name, connection: connection, markName: mark)
    }

    /// Starts a write of what waits, as the pump does: its attempt and marks.
    static func startWrite(_ queue: inout Queue, version: Int = 0) -> (attempt: Int, marks: [String])? {
        guard case .write(let attempt, let marks) = queue.next(roomActive: true, hasWrites: false, version: version)
        else { return nil }
        return (attempt, marks)
    }

    @Test func aWriteTakesEverythingThatWaitedAndReadsEachMarkOnce() throws {
        var queue = Queue()
        #expect(queue.receive(Self.input("a", mark: "s2")) == .startPump)
        #expect(queue.receive(Self.input("b", mark: "s1")) == .alreadyRunning)
        guard case .queued(.alreadyRunning) = queue.route("r", writesIdle: true) else {
            Issue.record("a reply after inputs went out before them")
            return
        }
        #expect(queue.receive(Self.input("c", mark: "s2")) == .alreadyRunning)
        let write = try #require(Self.startWrite(&queue))
        #expect(write.marks == ["s1", "s2"])
        #expect(queue.incoming.isEmpty)
        #expect(queue.batch.count == 4)

        // Received while the write is in flight: waits for the next one.
        #expect(queue.receive(Self.input("d")) == .alreadyRunning)
        let prepared = queue.prepare(attempt: write.attempt)
        #expect(prepared)
        let applied = queue.applyBatch(from: 0).map { item -> String in
            switch item {
            case .input(let input): input.name
            case .reply(let reply): reply
            }
        }
        #expect(applied == ["a", "b", "r", "c"])
        // An answer made while the batch is applied goes with the write.
        guard case .holdWithWrite = queue.route("ack", writesIdle: false) else {
            Issue.record("an answer made inside the write was not held with it")
            return
        }
        queue.batchApplied()
        let ending = queue.writeFinished()
        #expect(ending.end == .release)
        #expect(ending.failures.isEmpty)
        #expect(queue.batch.isEmpty)
        let next = try #require(Self.startWrite(&queue, version: 3))
        #expect(next.attempt == write.attempt + 1)
        #expect(queue.batch.count == 1)
    }

    @Test func repliesAloneLeaveTogetherOnceNothingIsWritten() {
        var queue = Queue()
        guard case .send = queue.route("now", writesIdle: true) else {
            Issue.record("a reply with nothing before it was held")
            return
        }
        // Something of the room is still held back: the reply waits for the pump.
        guard case .queued(.startPump) = queue.route("later", writesIdle: false) else {
            Issue.record("a reply behind held-back frames did not wait")
            return
        }
        guard case .queued(.alreadyRunning) = queue.route("after", writesIdle: false) else {
            Issue.record("a second reply did not queue behind the first")
            return
        }
        guard case .send(let replies) = queue.next(roomActive: true, hasWrites: false, version: 0) else {
            Issue.record("replies alone started a write")
            return
        }
        #expect(replies == ["later", "after"])
        guard case .idle = queue.next(roomActive: true, hasWrites: false, version: 0) else {
            Issue.record("the pump went on with nothing to do")
            return
        }
    }

    @Test func aWriteThatSurelyFailedAnswersEveryInputAndSendsEveryReplyInOrder() throws {
        var queue = Queue()
        _ = queue.receive(Self.input("a", from: 1))
        _ = queue.route("r", writesIdle: true)
        _ = queue.receive(Self.input("b", from: 2))
        let write = try #require(Self.startWrite(&queue))
        let prepared = queue.prepare(attempt: write.attempt)
        #expect(prepared)
        _ = queue.applyBatch(from: 5)
        queue.batchApplied()
        _ = queue.receive(Self.input("c", from: 1))
        let ending = queue.writeFailed(uncertain: false)
        #expect(ending.end == .answerUnavailable(rollBackTo: 5))
        #expect(Self.described(ending.failures) == ["answer a", "send r", "answer b"])
        // What came after is not of the failed write: it waits for the next.
        #expect(queue.incoming.count == 1)
    }

    @Test func anUncertainCommitSendsEachConnectionAwayWhereItsFirstInputWasAndDropsWhatItQueuedSince() throws {
        var queue = Queue()
        _ = queue.receive(Self.input("a", from: 1))
        _ = queue.route("r1", writesIdle: true)
        _ = queue.receive(Self.input("b", from: 1))
        _ = queue.receive(Self.input("c", from: 2))
        _ = queue.receive(Self.input("http"))
        let write = try #require(Self.startWrite(&queue))
        // Received after the write was sent: from a connection sent away, and from one that was not in it.
        _ = queue.receive(Self.input("d", from: 1))
        _ = queue.receive(Self.input("e", from: 3))
        _ = queue.route("r2", writesIdle: false)
        let prepared = queue.prepare(attempt: write.attempt)
        #expect(prepared)
        _ = queue.applyBatch(from: 0)
        queue.batchApplied()
        let ending = queue.writeFailed(uncertain: true)
        #expect(ending.isUncertain)
        #expect(ending.end == .sendAway(rollBackTo: 0))
        #expect(Self.described(ending.failures) == ["away 1", "send r1", "away 2", "answer http"])
        #expect(Self.described(queue.incoming) == ["e", "r2"])
    }

    @Test func aPrepareOfAWriteGivenUpOnAppliesNothing() throws {
        var queue = Queue()
        _ = queue.receive(Self.input("a", from: 1))
        let first = try #require(Self.startWrite(&queue))
        // The server stopped waiting for it before its lock was taken.
        let ending = queue.writeFailed(uncertain: false)
        #expect(ending.end == .answerUnavailable(rollBackTo: nil))
        #expect(Self.described(ending.failures) == ["answer a"])
        _ = queue.receive(Self.input("b", from: 1))
        let second = try #require(Self.startWrite(&queue))
        let stale = queue.prepare(attempt: first.attempt)
        let current = queue.prepare(attempt: second.attempt)
        #expect(!stale)
        #expect(current)
    }

    @Test func aFailedWriteAcksASeqStoredBeforeAndRefusesTheRest() throws {
        var queue = Queue()
        _ = queue.receive(Input(name: "sent again", connection: 1, markName: "s", session: "s", seq: 2))
        _ = queue.receive(Input(name: "new", connection: 1, markName: "s", session: "s", seq: 4))
        _ = queue.receive(Self.input("http"))
        _ = queue.route("r", writesIdle: true)
        var marks = Self.marksUpTo3
        let answers = try Self.failWrite(&queue, uncertain: false, marks: &marks)
        #expect(Self.described(answers) == ["duplicate sent again", "unavailable new", "unavailable http", "send r"])
        // Sent again after a later request is applied, the refused one is applied, not taken for a duplicate.
        #expect(marks.marks["s"]?.refused == [4])
    }

    @Test func anUncertainWriteSendsConnectionsAwayAndTellsTheOthersItMayBeStored() throws {
        var queue = Queue()
        _ = queue.receive(Input(name: "ws", connection: 1, markName: "s", session: "s", seq: 2))
        _ = queue.receive(Self.input("http", mark: "key"))
        var marks = Self.marksUpTo3
        let answers = try Self.failWrite(&queue, uncertain: true, marks: &marks)
        #expect(Self.described(answers) == ["away 1", "unknown http"])
    }

    /// Session `s` has stored requests up to `seq` 3.
    static let marksUpTo3 = SessionMarks([StoredMark(room: "room", session: "s", seq: 3, time: 0)])

    /// Writes what waits, applies its batch, and has its commit fail: the answers to the batch.
    static func failWrite(
        _ queue: inout Queue, uncertain: Bool, marks: inout SessionMarks
    ) throws -> [Queue.Ending.Answer] {
        let write = try #require(startWrite(&queue))
        let prepared = queue.prepare(attempt: write.attempt)
        #expect(prepared)
        _ = queue.applyBatch(from: 0)
        queue.batchApplied()
        return queue.writeFailed(uncertain: uncertain).answers(marks: &marks, now: 1)
    }

    static func described(_ answers: [Queue.Ending.Answer]) -> [String] {
        answers.map { answer in
            switch answer {
            case .sendAway(let connection): "away \(connection)"
            case .duplicate(let input): "duplicate \(input.name)"
            case .unknown(let input): "unknown \(input.name)"
            case .unavailable(let input): "unavailable \(input.name)"
            case .send(let reply): "send \(reply)"
            }
        }
    }

    static func described(_ failures: [Queue.Failure]) -> [String] {
        failures.map { failure in
            switch failure {
            case .answer(let input): "answer \(input.name)"
            case .sendAway(let connection): "away \(connection)"
            case .send(let reply): "send \(reply)"
            }
        }
    }

    static func described(_ items: [Queue.Item]) -> [String] {
        items.map { item in
            switch item {
            case .input(let input): input.name
            case .reply(let reply): reply
            }
        }
    }
}

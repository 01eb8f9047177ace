import LockstepApps
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// A write whose COMMIT goes unanswered may be stored: its sender must not be told that nothing was.
@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct ClusterCommitOutcomeTests {
    @Test func aCommitLeftUnansweredIsResumedNotAnsweredUnavailable() async throws {
        // The held COMMIT never answers, so any timeout is reached; one long enough that the first write, on a busy
        // machine, is not taken for a stalled one.
        try await withCluster(nodes: 1, operationTimeout: .seconds(3)) { postgres, servers in
            let port = servers[0].port
            let first = try await Writer.connect(port, session: "s1")
            #expect(try await first.action(#"{"type":"increment"}"#, seq: 1)["type"] == "ack")

            // From now on every COMMIT waits for a standby that never answers: stored, but not acknowledged.
            try await offThePool { try postgres.sql("ALTER SYSTEM SET synchronous_standby_names = 'nobody'") }
            try await offThePool { try postgres.sql("SELECT pg_reload_conf()") }
            first.client.sendRaw(#"{"type":"action","id":"a2","seq":2,"action":{"type":"increment"}}"#)
            var answers: [JSON] = []
            while let message = try? await first.client.nextJSON(timeout: .seconds(8)) { answers.append(message) }
            try await offThePool { try postgres.sql("ALTER SYSTEM RESET synchronous_standby_names") }
            try await offThePool { try postgres.sql("SELECT pg_reload_conf()") }

            // The COMMIT lands: the change was stored after all.
            let room = try #require(try await ClusterTests.room("test", port: port, at: 2))
            #expect(room["state"] == ["count": 2])
            #expect(!answers.contains { $0["id"] == "a2" && $0["code"] == "unavailable" })
            #expect(answers.contains { $0["type"] == "error" && $0["id"] == nil && $0["code"] == "unavailable" })
            #expect(await first.client.closeCode(timeout: .seconds(5)) == 1011)

            // Resumed with its session, the request sent again is recognised.
            let again = try await Writer.connect(port, session: "s1")
            // Until the server finds its database again it answers unavailable (nothing applied), as a client with a
            // session expects: it sends the request again.
            let answer = try await Self.sendUntilAvailable(#"{"type":"increment"}"#, seq: 2, by: again)
            #expect(answer["duplicate"] == true)
            #expect(try await roomState(port) == ["count": 2])
        }
    }

    /// A request sent behind one whose COMMIT went unanswered is not applied either: its `seq` would move the
    /// session's mark past a request that was not stored, and the resumed client would drop that one as applied.
    @Test func whatFollowsAnUnansweredCommitWaitsForTheResume() async throws {
        try await withCluster(nodes: 1, operationTimeout: .seconds(3)) { postgres, servers in
            let port = servers[0].port
            let first = try await Writer.connect(port, session: "s1")
            #expect(try await first.action(#"{"type":"increment"}"#, seq: 1)["type"] == "ack")

            // The COMMIT of an `add 777` runs past the deadline, then fails: the server cannot know it was not stored.
            // It holds the room's lock a second past the deadline, well within the deadline of the write after it.
            let trap = Self.trap(#"PERFORM pg_sleep(4); RAISE EXCEPTION 'trapped';"#, deferred: true)
            try await offThePool { try postgres.sql(trap) }
            first.client.sendRaw(#"{"type":"action","id":"a2","seq":2,"action":{"type":"add","amount":777}}"#)
            // 3 goes out once 2's COMMIT is in the trap, so it waits for the next write.
            try await postgres.waitUntil(
                "the COMMIT to reach the trap", "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'",
                answers: "1")
            first.client.sendRaw(#"{"type":"action","id":"a3","seq":3,"action":{"type":"increment"}}"#)
            #expect(await first.client.closeCode(timeout: .seconds(15)) == 1011)

            // Resumed, the session's mark is 1: the client sends 2 and 3 again, and each is applied once.
            try await offThePool { try postgres.sql("DROP TRIGGER trap ON changes") }
            let again = try await Self.session(port)
            let snapshot = try await again.nextJSON(type: "snapshot")
            #expect(snapshot["seq"] == 1)
            #expect(snapshot["state"] == ["count": 1], "the increment behind the unanswered COMMIT was not applied")
            let resent = Writer(client: again)
            #expect(try await resent.action(#"{"type":"add","amount":777}"#, seq: 2)["duplicate"] == nil)
            #expect(try await resent.action(#"{"type":"increment"}"#, seq: 3)["duplicate"] == nil)
            #expect(try await roomState(port) == ["count": 779])
        }
    }

    /// A connection whose request's COMMIT went unanswered is sent away where that request stands: an answer to what
    /// it sent after it (a `history` taken by the same write) never reaches it before the request's own.
    @Test func aReadBehindAnUnansweredCommitIsNotAnsweredBeforeIt() async throws {
        try await withCluster(nodes: 1, operationTimeout: .seconds(3)) { postgres, servers in
            let port = servers[0].port
            let first = try await Writer.connect(port, session: "s1")
            #expect(try await first.action(#"{"type":"increment"}"#, seq: 1)["type"] == "ack")

            // An `add 555` is stored slowly, well within the deadline; the COMMIT of an `add 777` runs past it, then
            // fails: the server cannot know that it was not stored.
            let slow = #"PERFORM pg_sleep(1.5);"#
            try await offThePool {
                try postgres.sql(
                    Self.trap(#"PERFORM pg_sleep(4); RAISE EXCEPTION 'trapped';"#, deferred: true)
                        + Self.trap(slow, deferred: false, named: "slow", matching: 555))
            }
            first.client.sendRaw(#"{"type":"action","id":"a2","seq":2,"action":{"type":"add","amount":555}}"#)
            try await postgres.waitUntil(
                "the slow write to be stored", "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'",
                answers: "1")
            // Both wait behind the slow write, and the next write takes both.
            first.client.sendRaw(#"{"type":"action","id":"a3","seq":3,"action":{"type":"add","amount":777}}"#)
            first.client.sendRaw(#"{"type":"history","id":"h"}"#)
            var answers: [JSON] = []
            while let message = try? await first.client.nextJSON(timeout: .seconds(15)) { answers.append(message) }
            let ids = answers.compactMap { $0["id"]?.stringValue }
            #expect(ids.contains("a2"))
            // `a3` is answered by the resume, not here; so is `h`, sent after it.
            #expect(!ids.contains("a3") && !ids.contains("h"), "\(ids)")
            #expect(answers.contains { $0["type"] == "error" && $0["id"] == nil && $0["code"] == "unavailable" })
            #expect(await first.client.closeCode(timeout: .seconds(5)) == 1011)
            try await offThePool { try postgres.sql("DROP TRIGGER trap ON changes; DROP TRIGGER slow ON changes") }
        }
    }

    /// A request answered `unavailable` and then one after it applied: the first is a hole below the session's mark.
    /// Sent again it is applied, not answered as a duplicate, and a client that never got the answer resumes below it.
    @Test func aRequestAnsweredUnavailableIsAHoleBelowTheMark() async throws {
        try await withCluster(nodes: 1) { postgres, servers in
            let port = servers[0].port
            let first = try await Writer.connect(port, session: "s1")
            #expect(try await first.action(#"{"type":"increment"}"#, seq: 1)["type"] == "ack")

            try await offThePool { try postgres.sql(Self.trap("RAISE EXCEPTION 'trapped';", deferred: false)) }
            let refused = try await first.action(#"{"type":"add","amount":777}"#, seq: 2)
            #expect(refused["code"] == "unavailable")
            // The write that failed may leave the server probing its database for a moment: 3 is sent until applied.
            let answer = try await Self.sendUntilAvailable(#"{"type":"increment"}"#, seq: 3, by: first)
            #expect(answer["type"] == "ack")
            first.close()

            // The client that lost the connection before it read the answer to 2 is told to send from 2 again.
            try await offThePool { try postgres.sql("DROP TRIGGER trap ON changes") }
            let again = try await Self.session(port)
            #expect(try await again.nextJSON(type: "snapshot")["seq"] == 1)
            let resent = Writer(client: again)
            #expect(try await resent.action(#"{"type":"add","amount":777}"#, seq: 2)["duplicate"] == nil)
            #expect(try await resent.action(#"{"type":"increment"}"#, seq: 3)["duplicate"] == true)
            #expect(try await roomState(port) == ["count": 779])
            again.close()

            // Filled, the hole is gone: the mark is 3 again, on this server and, stored, on a server started now.
            let third = try await Self.session(port)
            #expect(try await third.nextJSON(type: "snapshot")["seq"] == 3)
            third.close()
            let other = try await clusterNode(on: postgres, app: .counter, operationTimeout: .seconds(20))
            defer { other.shutdown() }
            let fourth = try await Self.session(other.port)
            #expect(try await fourth.nextJSON(type: "snapshot")["seq"] == 3)
            fourth.close()
        }
    }

    /// A request sent again (as after a reconnection) that a stored write already applied is a duplicate, also when
    /// the write it lands in fails: `unavailable` would have its sender take it as not applied, and send it as new.
    @Test func aRequestAppliedBeforeStaysADuplicateWhenTheWriteItLandsInFails() async throws {
        try await withCluster(nodes: 1, operationTimeout: .seconds(3)) { postgres, servers in
            let port = servers[0].port
            let first = try await Writer.connect(port, session: "s1")
            #expect(try await first.action(#"{"type":"increment"}"#, seq: 1)["type"] == "ack")

            // Another transaction holds the room's row past the deadline of the next write, which fails waiting.
            let hold = "BEGIN; SELECT 1 FROM rooms WHERE room = 'test' FOR UPDATE; SELECT pg_sleep(30); COMMIT;"
            let holder = Task { try? await offThePool { try postgres.sql(hold) } }
            let sleeping = "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
            try await postgres.waitUntil("the other transaction to hold the room", sleeping, answers: "1")
            let answer = try await first.ask(#"{"type":"action","id":"again","seq":1,"action":{"type":"increment"}}"#)
            #expect(answer["id"] == "again" && answer["type"] == "ack" && answer["duplicate"] == true, "\(answer)")

            try await offThePool {
                try postgres.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep'")
            }
            _ = await holder.value
            #expect(try await roomState(port) == ["count": 1])
        }
    }

    /// The Swift client sends a request answered `unavailable` again itself, with its `seq`, until it is stored: as
    /// a new request it could be applied twice, when an earlier connection's copy reached a server that stored it.
    @Test func theSwiftClientSendsARequestAnsweredUnavailableAgainItself() async throws {
        try await withCluster(nodes: 1) { postgres, servers in
            let client = try RoomClient(
                url: "ws://127.0.0.1:\(servers[0].port)/rooms/test", session: "s1",
                reconnect: ReconnectPolicy(initialDelay: .milliseconds(100), maxDelay: .milliseconds(500)),
                transport: sharedTransport)
            try await client.connect()
            // The trap counts its refusals in a sequence, which its failed transactions do not take back.
            let trap = Self.trap("PERFORM nextval('refusals'); RAISE EXCEPTION 'trapped';", deferred: false)
            try await offThePool { try postgres.sql("CREATE SEQUENCE refusals; " + trap) }
            let send = Task { try await client.send(action: ["type": "add", "amount": 777]) }
            try await postgres.waitUntil("a refusal", "SELECT is_called FROM refusals", answers: "t")
            #expect(await client.pendingCount == 1, "the refused request waits in the outbox")
            try await offThePool { try postgres.sql("DROP TRIGGER trap ON changes") }
            let version = try await send.value
            #expect(try await roomState(servers[0].port) == ["count": 777])
            #expect(await client.version == version)
            #expect(await client.pendingCount == 0)
            await client.close()
        }
    }

    /// Sends `action` with `seq` again while it is answered `unavailable` (the server probing its database), as a
    /// client with a session does; the first other answer.
    static func sendUntilAvailable(_ action: String, seq: Int, by writer: Writer) async throws -> JSON {
        var answer = try await writer.action(action, seq: seq)
        for _ in 0..<50 where answer["code"] == "unavailable" {
            try await Task.sleep(for: .milliseconds(200))
            answer = try await writer.action(action, seq: seq)
        }
        return answer
    }

    /// A connection of session `s1` to the room `test`.
    static func session(_ port: Int) async throws -> TestClient {
        try await TestClient.connect(port: port, room: "test", query: "session=s1", using: sharedTransport)
    }

    /// A trigger `name` on stored changes that runs `body` for a change adding `amount`: at once, or at COMMIT when
    /// `deferred`.
    static func trap(
        _ body: String, deferred: Bool, named name: String = "trap", matching amount: Int = 777
    ) -> String {
        """
        CREATE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF convert_from(NEW.message, 'UTF8') LIKE '%"amount":\(amount)%' THEN \(body) END IF;
            RETURN NEW;
        END $$;
        CREATE \(deferred ? "CONSTRAINT " : "")TRIGGER \(name) AFTER INSERT ON changes
            \(deferred ? "DEFERRABLE INITIALLY DEFERRED " : "")FOR EACH ROW EXECUTE FUNCTION \(name)();
        """
    }
}

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
            var answer = try await again.action(#"{"type":"increment"}"#, seq: 2)
            for _ in 0..<50 where answer["code"] == "unavailable" {
                try await Task.sleep(for: .milliseconds(200))
                answer = try await again.action(#"{"type":"increment"}"#, seq: 2)
            }
            #expect(answer["duplicate"] == true)
            #expect(try await roomState(port) == ["count": 2])
        }
    }
}

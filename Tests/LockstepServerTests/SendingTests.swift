import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// An app that embeds the server sends requests into rooms and reads them from Swift.
@Suite(.timeLimit(.minutes(2))) struct SendingTests {
    @Test func aRequestFromSwiftIsAppliedAsItsSenderAndClientsSeeIt() async throws {
        try await withServer(app: .counter) { server in
            let client = try await TestClient.connect(server, room: "shop", using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            let billing = RequestSender(name: "billing", session: "billing-job")
            let version = try await server.send(
                .action(id: "p1", action: ["type": "add", "amount": 3]), to: "shop", from: billing)
            #expect(version == 1)
            let patch = try await client.nextJSON(type: "patch")
            #expect(patch["cause"]?["client"] == "server")
            #expect(patch["cause"]?["name"] == "billing")
            #expect(try await server.state(of: "shop") == (1, ["count": 3]))

            // The session makes the change billing's for undo mine; another sender has nothing to undo.
            await #expect(throws: RoomRequestError(code: "nothing_to_undo", message: "there is nothing to undo")) {
                try await server.send(.undo(id: nil, mine: true), to: "shop", from: RequestSender(name: "other"))
            }
            #expect(try await server.send(.undo(id: nil, mine: true), to: "shop", from: billing) == 2)
            #expect(try await server.state(of: "shop").state == ["count": 0])
        }
    }

    @Test func errorsCarryTheProtocolsCodes() async throws {
        try await withServer(app: .counter) { server in
            do throws(RoomRequestError) {
                _ = try await server.send(.action(id: nil, action: ["type": "fly"]), to: "shop")
                Issue.record("an unknown action was applied")
            } catch {
                #expect(error.code == "invalid_action")
            }
            do throws(RoomRequestError) {
                _ = try await server.state(of: "never")
                Issue.record("a room never created was read")
            } catch {
                #expect(error.code == "not_found")
            }
            for name in [".", "..", "a b", ""] {
                do throws(RoomRequestError) {
                    _ = try await server.send(.action(id: nil, action: ["type": "add", "amount": 1]), to: name)
                    Issue.record("a request reached room '\(name)', which no URL can name")
                } catch {
                    #expect(error.code == "bad_message")
                }
            }
            do throws(RoomRequestError) {
                _ = try await server.send(.history(id: nil, limit: nil), to: "shop")
                Issue.record("history was taken for a change")
            } catch {
                #expect(error.code == "bad_message")
            }
        }
    }
}

/// A room's committed changes as an `AsyncSequence`.
@Suite(.timeLimit(.minutes(2))) struct ChangesTests {
    @Test func everyCommittedChangeArrivesInOrderWhateverItsSource() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer(app: .counter, directory: directory) { server in
            let changes = try await server.changes(of: "feed")
            let client = try await TestClient.connect(server, room: "feed", using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            client.sendRaw(#"{"type":"action","id":"a","action":{"type":"increment"}}"#)
            _ = try await client.nextJSON(type: "ack")
            _ = try await HTTPGet.post(port: server.port, path: "/rooms/feed", json: #"{"type":"undo"}"#)
            _ = try await server.send(.action(id: nil, action: ["type": "add", "amount": 5]), to: "feed")
            var received: [CommittedChange] = []
            for await change in changes {
                received.append(change)
                if received.count == 3 { break }
            }
            #expect(received.map(\.version) == [1, 2, 3])
            #expect(received.map(\.cause.kind) == [.action, .undo, .action])
            #expect(received.map(\.cause.client) == ["c1", "http", "server"])
        }
    }
}

import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Reads of private parts: no operation reaches someone else's hand from inside, at or above it, and no error says
/// what it holds.
@Suite(.timeLimit(.minutes(2))) struct PrivateLeakTests {
    static let secret = "SECRET-A"

    /// A card game whose reducer words its refusals from the state, as a careless app might.
    struct Cards: ContextualReducer {
        struct State: Codable, Equatable, Sendable { var hands: [String: String] = [:] }
        enum Action: Codable, Sendable {
            case take(card: String)
            case guess(owner: String, card: String)
        }

        var initialState: State { State() }

        func reduce(
            into state: inout State, action: Action, context: ReducerContext
        ) throws(Rejection) -> Effect<Action> {
            switch action {
            case .take(let card):
                state.hands[context.sender?.subject ?? "nobody"] = card
            case .guess(let owner, let card):
                guard state.hands[owner] == card else {
                    throw Rejection("wrong: \(owner) holds \(state.hands[owner] ?? "nothing")")
                }
            }
            return .none
        }
    }

    static let cards = App(
        "cards", summary: "a hand per player", reducer: Cards(), privateParts: try! PrivateParts(["/hands/{sub}"]))

    /// Alice and bob on a server with `/hands/{sub}` private, alice's hand holding the secret, bob's his own card.
    static func withHands(
        stored: Bool = false,
        _ body: (SyncServer, _ alice: Writer, _ bob: Writer, _ bobToken: String) async throws -> Void
    ) async throws {
        let (tokens, aliceToken, bobToken) = try await PrivatePartsTests.aliceAndBob()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("leak-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer(app: .json, directory: stored ? directory : nil, configure: {
            $0.tokens = tokens
            $0.privateParts = try! PrivateParts(["/hands/{sub}"])
        }) { server in
            let alice = try await Writer.connect(server.port, token: aliceToken)
            let bob = try await Writer.connect(server.port, token: bobToken)
            try await alice.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/hands","value":{}}]"#))
            try await alice.ask(PrivatePartsTests.patch(
                #"[{"op":"add","path":"/hands/alice","value":{"card":"\#(secret)"}}]"#))
            try await bob.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/hands/bob","value":{"card":"b"}}]"#))
            try await alice.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/table","value":{}}]"#))
            try await body(server, alice, bob, bobToken)
        }
    }

    /// Every operation, with its `path` or `from` inside, at or above alice's hand, or at the root.
    static var sweep: [String] {
        let places = ["/hands/alice/card", "/hands/alice", "/hands", ""]
        var ops: [String] = []
        for place in places {
            ops += [
                #"{"op":"test","path":"\#(place)","value":{}}"#,
                #"{"op":"remove","path":"\#(place)"}"#,
                #"{"op":"replace","path":"\#(place)","value":{}}"#,
                #"{"op":"add","path":"\#(place)","value":{}}"#,
                #"{"op":"copy","from":"\#(place)","path":"/table/all"}"#,
                #"{"op":"move","from":"\#(place)","path":"/table/all"}"#,
            ]
            if !place.isEmpty {
                ops += [
                    #"{"op":"copy","from":"/table","path":"\#(place)"}"#,
                    #"{"op":"move","from":"/table","path":"\#(place)"}"#,
                ]
            }
        }
        return ops
    }

    @Test(arguments: [false, true]) func noOperationReachesAlicesHandFromInsideAtOrAboveIt(stored: Bool) async throws {
        try await Self.withHands(stored: stored) { server, alice, bob, bobToken in
            let before = try await roomState(server.port, token: bobToken)
            for op in Self.sweep {
                let answer = try await bob.ask(PrivatePartsTests.patch("[\(op)]"))
                #expect(answer["code"] == "forbidden", "\(op): \(answer)")
            }
            // One refused operation refuses the whole patch, the allowed ones before it included.
            let sneaky = try await bob.ask(PrivatePartsTests.patch(
                #"[{"op":"copy","from":"/hands/bob","path":"/table/mine"},{"op":"copy","from":"/hands","path":"/x"}]"#))
            #expect(sneaky["code"] == "forbidden")
            #expect(try await roomState(server.port, token: bobToken) == before)
            // Bob still reads and moves what is his or public.
            let own = #"[{"op":"test","path":"/hands/bob","value":{"card":"b"}},"#
                + #"{"op":"copy","from":"/hands/bob","path":"/table/mine"}]"#
            #expect(try await bob.ask(PrivatePartsTests.patch(own))["type"] == "ack")
            // Alice is refused bob's hand alike.
            #expect(try await alice.ask(PrivatePartsTests.patch(
                #"[{"op":"copy","from":"/hands","path":"/table/all"}]"#))["code"] == "forbidden")
            _ = await bob.client.drain(timeout: .milliseconds(200))
            var bytes = try await PrivatePartsTests.httpBytes(server.port, token: bobToken, version: 5)
            bytes += await bob.client.frames.flatMap { $0 }
            #expect(!PrivatePartsTests.contains(bytes, Self.secret))
        }
    }

    @Test func noKindOfAnswerBobGetsCarriesAlicesHand() async throws {
        try await Self.withHands(stored: true) { server, alice, bob, bobToken in
            try await bob.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/table/x","value":1}]"#))
            try await alice.ask(PrivatePartsTests.patch(#"[{"op":"replace","path":"/table/x","value":2}]"#))
            var codes: Set<String> = []
            for request in [
                "not json", "[1]", #"{"type":"nope"}"#, #"{"type":"action","action":{"type":"shout"}}"#,
                PrivatePartsTests.patch(#"[{"op":"test","path":"/table/x","value":7}]"#),
                PrivatePartsTests.patch(#"[{"op":"remove","path":"/nowhere"}]"#),
                PrivatePartsTests.patch(#"[{"op":"copy","from":"/hands","path":"/x"}]"#),
                #"{"type":"undo","mine":true}"#, #"{"type":"redo","mine":true}"#, #"{"type":"revert","to":99}"#,
                #"{"type":"action","seq":1,"action":{}}"#,
            ] {
                bob.client.sendRaw(request)
                while true {
                    let answer = try await bob.client.nextJSON()
                    guard answer["type"] == "error" || answer["type"] == "ack" else { continue }
                    codes.insert(answer["code"]?.stringValue ?? "ack")
                    break
                }
            }
            let expected: Set = ["bad_json", "bad_message", "invalid_action", "rejected", "forbidden", "conflict"]
            #expect(codes.isSuperset(of: expected), "\(codes)")
            try await bob.ask(#"{"type":"undo"}"#)
            let bytes = try await Self.everything(bob, got: server.port, token: bobToken, version: 6)
            #expect(!PrivatePartsTests.contains(bytes, Self.secret), "bob received alice's hand")
        }
    }

    /// Alice may test her own hand beside a public change; the `cause.action` others get would carry the value she
    /// tested, so theirs go without it: on the wire, in `history`, in reads and in the log, in memory and stored.
    @Test(arguments: [false, true]) func aTestOfAlicesOwnHandNeverShowsItsValueToOthers(stored: Bool) async throws {
        try await Self.withHands(stored: stored) { server, alice, bob, bobToken in
            let probe = #"[{"op":"test","path":"/hands/alice/card","value":"\#(Self.secret)"},"#
                + #"{"op":"add","path":"/table/y","value":2}]"#
            let own = try await alice.change(PrivatePartsTests.patch(probe))
            let seen = try await Self.patch(5, to: bob)
            #expect(seen["cause"]?["action"] == nil, "\(seen)")
            let bytes = try await Self.everything(bob, got: server.port, token: bobToken, version: 5)
            #expect(!PrivatePartsTests.contains(bytes, Self.secret), "bob learned alice's card from her test")
            // Alice's own copy of the cause keeps her action.
            #expect(own["cause"]?["action"] != nil)
        }
    }

    /// A value alice moves from the table into her hand leaves the table for everyone: bob's view loses it (it
    /// went out of his sight), gets it back when she moves it out again, and loses it when he undoes that.
    @Test func aValueMovedIntoAlicesHandLeavesBobsView() async throws {
        try await Self.withHands { server, alice, bob, bobToken in
            try await alice.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/table/pub","value":"P"}]"#))
            _ = try await Self.patch(5, to: bob)
            var mirror = try #require(try await roomState(server.port, token: bobToken))
            func follow(to version: Int) async throws {
                let ops = try JSONPatch(json: try #require(try await Self.patch(version, to: bob)["ops"]))
                try ops.apply(to: &mirror)
                #expect(mirror == (try await roomState(server.port, token: bobToken)), "version \(version)")
            }
            let into = #"[{"op":"move","from":"/table/pub","path":"/hands/alice/c"}]"#
            try await alice.ask(PrivatePartsTests.patch(into))
            try await follow(to: 6)
            #expect(mirror["table"]?["pub"] == nil)
            try await alice.ask(PrivatePartsTests.patch(#"[{"op":"move","from":"/hands/alice/c","path":"/table/pub"}]"#))
            try await follow(to: 7)
            #expect(mirror["table"]?["pub"] == "P")
            bob.client.sendRaw(#"{"type":"undo"}"#)
            try await follow(to: 8)
            #expect(mirror["table"]?["pub"] == nil)
        }
    }

    /// Every byte `reader` got: its frames (with its `history`), and what it reads over HTTP.
    static func everything(_ reader: Writer, got port: Int, token: String, version: Int) async throws -> [UInt8] {
        reader.client.sendRaw(#"{"type":"history","id":"h","limit":100}"#)
        _ = try await reader.client.nextJSON(type: "history")
        _ = await reader.client.drain(timeout: .milliseconds(200))
        let frames = await reader.client.frames.flatMap { $0 }
        return frames + (try await PrivatePartsTests.httpBytes(port, token: token, version: version))
    }

    /// The next patch of `version` that `writer` gets.
    static func patch(_ version: Int, to writer: Writer) async throws -> JSON {
        while true {
            let patch = try await writer.client.nextJSON(type: "patch")
            if patch["version"]?.intValue == version { return patch }
        }
    }

    @Test func aFailedTestOnAPublicPlaceSaysWhereNeverWhat() async throws {
        try await Self.withHands { server, alice, bob, bobToken in
            try await alice.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/table/note","value":"tea"}]"#))
            let answer = try await bob.ask(PrivatePartsTests.patch(#"[{"op":"test","path":"/table","value":{}}]"#))
            #expect(answer["code"] == "rejected")
            let message = answer["message"]?.stringValue ?? ""
            #expect(message.contains("/table"))
            #expect(!message.contains("tea"))
        }
    }

    @Test func anAppsRefusalThatNamesAlicesCardIsWithheldFromBobOnly() async throws {
        let (tokens, aliceToken, bobToken) = try await PrivatePartsTests.aliceAndBob()
        try await withServer(app: Self.cards, configure: { $0.tokens = tokens }) { server in
            let alice = try await Writer.connect(server.port, token: aliceToken)
            let bob = try await Writer.connect(server.port, token: bobToken)
            try await alice.action(#"{"take":{"card":"\#(Self.secret)"}}"#)
            try await bob.action(#"{"take":{"card":"nine"}}"#)

            let refused = try await bob.action(#"{"guess":{"owner":"alice","card":"ace"}}"#)
            #expect(refused["code"] == "rejected")
            let reason = refused["message"]?.stringValue ?? ""
            #expect(!reason.contains(Self.secret), "\(refused)")
            // A reason that names only what the reader may see reaches it whole.
            let own = try await alice.action(#"{"guess":{"owner":"alice","card":"ace"}}"#)
            #expect(own["message"]?.stringValue == "wrong: alice holds \(Self.secret)")
            let nothing = try await bob.action(#"{"guess":{"owner":"carol","card":"ace"}}"#)
            #expect(nothing["message"] == "wrong: carol holds nothing")

            _ = await bob.client.drain(timeout: .milliseconds(200))
            var bytes = try await PrivatePartsTests.httpBytes(server.port, token: bobToken, version: 2)
            bytes += await bob.client.frames.flatMap { $0 }
            #expect(!PrivatePartsTests.contains(bytes, Self.secret))
        }
    }
}

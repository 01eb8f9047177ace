import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Readers of a room with private parts share one stream, and an owner gets its own form of a change in its place:
/// under random changes from three writers (public ones, inside their own hands, moves, undo, redo, undo mine,
/// revert), every patch each reader receives brings its mirror to exactly what its token may read of the room at
/// that version (over HTTP), and a resume replays each reader's own forms.
@Suite(.timeLimit(.minutes(2))) struct PrivateReadersTests {
    static let readers = ["alice", "bob", "carol"]

    static func randomAction(by reader: String, _ random: inout SeededRandom) -> String {
        let value = Int.random(in: 0..<100, using: &random)
        let ops = switch Int.random(in: 0..<8, using: &random) {
        case 0: #"[{"op":"add","path":"/table/-","value":\#(value)}]"#
        case 1: #"[{"op":"replace","path":"/score","value":\#(value)}]"#
        case 2: #"[{"op":"add","path":"/hands/\#(reader)/cards/-","value":"\#(reader)-\#(value)"}]"#
        case 3: #"[{"op":"replace","path":"/hands/\#(reader)/note","value":"\#(reader)-secret-\#(value)"}]"#
        case 4:
            #"[{"op":"add","path":"/table/-","value":\#(value)},{"op":"add","path":"/hands/\#(reader)/cards/0","value":\#(value)}]"#
        case 5: #"[{"op":"move","from":"/table/0","path":"/score"},{"op":"add","path":"/table/-","value":1}]"#
        case 6: #"[{"op":"copy","from":"/score","path":"/hands/\#(reader)/note"}]"#
        default: #"[{"op":"remove","path":"/hands/\#(reader)/cards/0"},{"op":"add","path":"/hands/\#(reader)/cards/-","value":0}]"#
        }
        return #"{"type":"action","action":{"type":"patch","ops":\#(ops)}}"#
    }

    @Test(arguments: [1, 2]) func everyReaderMirrorsWhatItMayRead(seed: Int) async throws {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        var issued: [String: String] = [:]
        for reader in Self.readers {
            issued[reader] = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(300), subject: reader)
        }
        try await withServer(app: .json, configure: {
            $0.tokens = tokens
            $0.privateParts = try! PrivateParts(["/hands/{sub}"])
        }) { server in
            var writers: [String: Writer] = [:]
            for reader in Self.readers { writers[reader] = try await Writer.connect(server.port, token: issued[reader]) }
            try await writers["alice"]!.ask(PrivatePartsTests.patch(
                #"[{"op":"add","path":"","value":{"table":[1,2,3,4,5,6,7,8,9],"score":0,"hands":{}}}]"#))
            for reader in Self.readers {
                let hand = #"{"op":"add","path":"/hands/\#(reader)","value":{"cards":[0],"note":"\#(reader)-secret"}}"#
                #expect(try await writers[reader]!.ask(PrivatePartsTests.patch("[\(hand)]"))["type"] == "ack")
            }
            var random = SeededRandom(epoch: "private readers", version: seed)
            var version = 1
            var resumeFrom: Int?
            for step in 0..<120 {
                let reader = Self.readers[Int.random(in: 0..<3, using: &random)]
                let request = switch Int.random(in: 0..<10, using: &random) {
                case 0: #"{"type":"undo"}"#
                case 1: #"{"type":"redo"}"#
                case 2: #"{"type":"undo","mine":true}"#
                case 3: #"{"type":"revert","to":\#(Int.random(in: 1...version, using: &random))}"#
                default: Self.randomAction(by: reader, &random)
                }
                version = try await writers[reader]!.ask(request)["version"]?.intValue ?? version
                if step == 60 { resumeFrom = version }
            }
            #expect(version > 50, "enough of the random changes applied")

            for reader in Self.readers {
                let client = writers[reader]!.client
                _ = await client.drain(timeout: .milliseconds(300))
                var mirror = JSON.null
                var mirrors: [Int: JSON] = [:]
                for message in try await client.frames.map({ try JSON(parsing: $0) }) {
                    let at = message["version"]?.intValue ?? -1
                    switch message["type"]?.stringValue {
                    case "snapshot": mirror = message["state"] ?? .null
                    case "patch": _ = try JSONPatch(json: message["ops"] ?? .null).apply(to: &mirror)
                    default: continue
                    }
                    mirrors[at] = mirror
                    let readable = try await HTTPGet(
                        port: server.port, path: "/rooms/test?version=\(at)",
                        headers: ["Authorization: Bearer \(issued[reader]!)"]
                    ).json?["state"]
                    #expect(mirror == readable, "\(reader) at version \(at)")
                }
                for other in Self.readers where other != reader {
                    #expect(!Self.contains(mirror, "\(other)-"), "\(reader) holds \(other)'s hand")
                }

                // A second connection of the same reader resumes from a version its stream has its forms for.
                let from = try #require(mirrors.keys.filter { $0 <= resumeFrom! }.max())
                let resumed = try await TestClient.connect(
                    port: server.port, query: "since=\(from)&token=\(issued[reader]!)", using: sharedTransport)
                #expect(try await resumed.nextJSON()["type"] == "resume")
                _ = await resumed.drain(timeout: .milliseconds(300))
                var replayed = mirrors[from]!
                for message in try await resumed.frames.map({ try JSON(parsing: $0) }) where message["type"] == "patch" {
                    _ = try JSONPatch(json: message["ops"] ?? .null).apply(to: &replayed)
                }
                #expect(replayed == mirror, "\(reader)'s resume ends where its live connection did")
                resumed.close()
            }
        }
    }

    static func contains(_ value: JSON, _ text: String) -> Bool {
        String(decoding: value.serialized(), as: UTF8.self).contains(text)
    }
}

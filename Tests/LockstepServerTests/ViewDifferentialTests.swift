import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Views against the whole room, under random JSON Patch actions, undos, redos, undo mines and reverts from several
/// writers: at every version a view
/// received, its mirror is the room's value at its pointer; every version that changed that value reached it, and
/// no other.
@Suite(.timeLimit(.minutes(2))) struct ViewDifferentialTests {
    static let initial = #"""
        {"a":{"b":{"c":1,"d":[1,2]}},"list":[{"x":0},{"x":1},{"x":2}],"we~ird/key":{"v":0}}
        """#
    static let views = [
        "/a", "/a/b/c", "/a/b/d/1", "/list/1", "/list/1/x", "/we~0ird~1key", "/we~0ird~1key/v", "/nothing/here",
    ]
    static let places = [
        "/a", "/a/b", "/a/b/c", "/a/b/d", "/a/b/d/0", "/a/b/d/1", "/a/b/d/-", "/a/e", "/list", "/list/0", "/list/1",
        "/list/1/x", "/list/2", "/list/-", "/we~0ird~1key", "/we~0ird~1key/v", "/nothing", "/nothing/here",
    ]

    static func randomAction(_ random: inout SeededRandom) -> String {
        let path = places[Int.random(in: 0..<places.count, using: &random)]
        let value: String = switch Int.random(in: 0..<4, using: &random) {
        case 0: "\(Int.random(in: 0..<5, using: &random))"
        case 1: #"{"x":\#(Int.random(in: 0..<5, using: &random))}"#
        case 2: "[1,2,3]"
        default: #"{"here":{"deep":true},"c":2}"#
        }
        let op = ["add", "replace", "remove", "add"][Int.random(in: 0..<4, using: &random)]
        let body = op == "remove" ? #"{"op":"remove","path":"\#(path)"}"# : #"{"op":"\#(op)","path":"\#(path)","value":\#(value)}"#
        return #"{"type":"action","action":{"type":"patch","ops":[\#(body)]}}"#
    }

    /// Every message a client received, as JSON, once nothing more arrives.
    static func messages(of client: TestClient) async throws -> [JSON] {
        _ = await client.drain(timeout: .milliseconds(500))
        return try await client.frames.map { try JSON(parsing: $0) }
    }

    @Test(arguments: [1, 2, 3]) func everyViewMirrorsItsPartOfTheRoom(seed: Int) async throws {
        try await withServer(app: .json) { server in
            let creator = try await Writer.connect(server.port)
            try await creator.action(#"{"type":"patch","ops":[{"op":"add","path":"","value":\#(Self.initial)}]}"#)
            let whole = try await TestClient.connect(port: server.port, using: sharedTransport)
            var viewers: [(path: String, client: TestClient)] = []
            for path in Self.views {
                let encoded = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path
                viewers.append(
                    (path, try await TestClient.connect(port: server.port, query: "path=\(encoded)", using: sharedTransport)))
            }
            for (_, client) in viewers { _ = try await client.nextJSON(type: "snapshot") }
            let writers = [creator, try await Writer.connect(server.port), try await Writer.connect(server.port)]
            var random = SeededRandom(epoch: "views", version: seed)
            var version = 1
            for _ in 0..<150 {
                let writer = writers[Int.random(in: 0..<writers.count, using: &random)]
                let request = switch Int.random(in: 0..<10, using: &random) {
                case 0: #"{"type":"undo"}"#
                case 1: #"{"type":"redo"}"#
                case 2: #"{"type":"undo","mine":true}"#
                case 3: #"{"type":"revert","to":\#(Int.random(in: 1...version, using: &random))}"#
                default: Self.randomAction(&random)
                }
                version = try await writer.ask(request)["version"]?.intValue ?? version
            }

            // The room at every version, from the whole-room client's snapshot and patches.
            var states: [Int: JSON] = [:]
            var current = JSON.null
            for message in try await Self.messages(of: whole) {
                switch message["type"]?.stringValue {
                case "snapshot": current = message["state"] ?? .null
                case "patch": _ = try JSONPatch(json: message["ops"] ?? .null).apply(to: &current)
                default: continue
                }
                states[message["version"]?.intValue ?? -1] = current
            }
            let final = try #require(states.keys.max())
            #expect(final > 50, "enough of the random actions applied")

            for (path, client) in viewers {
                let pointer = try JSONPointer(path)
                let value = { (version: Int) in states[version].flatMap { $0.value(at: pointer) } ?? .null }
                var mirror = JSON.null
                var start = -1
                var received: [Int] = []
                for message in try await Self.messages(of: client) {
                    let version = message["version"]?.intValue ?? -1
                    switch message["type"]?.stringValue {
                    case "snapshot":
                        mirror = message["state"] ?? .null
                        start = version
                    case "patch":
                        _ = try JSONPatch(json: message["ops"] ?? .null).apply(to: &mirror)
                        received.append(version)
                        #expect(mirror == value(version), "\(path) at version \(version)")
                    default:
                        continue
                    }
                }
                #expect(start >= 1 && mirror == value(final), "\(path) ends at the room's value")
                let changed = (start + 1...final).filter { value($0 - 1) != value($0) }
                #expect(received == changed, "\(path) receives exactly the versions that changed it")
            }
        }
    }
}

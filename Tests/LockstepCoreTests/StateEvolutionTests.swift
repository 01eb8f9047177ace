import LockstepCore
import LockstepJSON
import Testing

/// Migrations of stored states, without a server: their order, their edits, and what they refuse.
@Suite struct StateEvolutionTests {
    static let evolution = StateEvolution(
        version: 3,
        migrations: [
            Migration(from: 1) { state in try state.renameMember("title", to: "name") },
            Migration(from: 2) { state in try state.setMember("tags", to: []) },
        ])

    @Test func migrationsRunInOrderFromTheStoredVersion() throws {
        #expect(try Self.evolution.migrate(["title": "a", "n": 1], from: 1) == ["name": "a", "n": 1, "tags": []])
        #expect(try Self.evolution.migrate(["name": "a"], from: 2) == ["name": "a", "tags": []])
        #expect(try Self.evolution.migrate(["name": "a", "tags": ["x"]], from: 3) == ["name": "a", "tags": ["x"]])
    }

    @Test func aStateOfANewerVersionIsRefused() {
        #expect(throws: MigrationError.newerThanApp(stored: 4, app: 3)) {
            try Self.evolution.migrate([:], from: 4)
        }
    }

    @Test func editsKeepPlacesAndNameWhatDidNotFit() throws {
        var state: JSON = ["a": 1, "cards": [["text": "x", "b": 2], ["text": "y", "b": 3]], "z": 0]
        try state.modifyEach("/cards") { card in
            try card.renameMember("text", to: "title")
            try card.removeMember("b")
        }
        try state.modify("/cards/1") { card in try card.setMember("done", to: true) }
        try state.renameMember("a", to: "count")
        try state.renameMember("z", to: "z")
        #expect(
            state.serialized() == Array(#"{"count":1,"cards":[{"title":"x"},{"title":"y","done":true}],"z":0}"#.utf8))
        #expect(throws: StateEditError.missing(pointer: "/nothing")) { try state.modify("/nothing") { _ in } }
        #expect(throws: StateEditError.notAContainer(pointer: "/z")) { try state.modifyEach("/z") { _ in } }
        var number: JSON = 1
        #expect(throws: StateEditError.notAnObject(key: "k")) { try number.setMember("k", to: 2) }
    }

    @Test func aMigrationBetweenSwiftTypesDecodesTheOldAndEncodesTheNew() throws {
        struct Old: Decodable { var title: String }
        struct New: Encodable { var name: String; var done: Bool }
        let evolution = StateEvolution(
            version: 2,
            migrations: [
                Migration(from: 1, decoding: Old.self) { old in New(name: old.title, done: false) }
            ])
        #expect(try evolution.migrate(["title": "a"], from: 1) == ["name": "a", "done": false])
        do {
            _ = try evolution.migrate(["name": "a"], from: 1)
            Issue.record("migrated a state that is not of version 1")
        } catch {
            #expect(error == .failed(from: 1, reason: #"missing field "title""#))
            #expect("\(error)".contains("the migration from state version 1 to 2 failed"))
        }
    }

    @Test func anActionOfTheWrongShapeIsToldTheShapeActionsTake() throws {
        var store: any RoomStore = Store(reducer: Board())
        func refusal(_ action: JSON) -> String? {
            do {
                _ = try store.send(json: action)
                return nil
            } catch {
                guard case .invalidAction = error else { return "\(error)" }
                return error.message
            }
        }
        let unknown = try #require(refusal(["renam": ["_0": "x"]]))
        #expect(unknown.contains("one member, named after one of the cases of Action"))
        #expect(unknown.contains(#"found the member "renam", which is not a case of Action"#))
        #expect(
            try #require(refusal(["rename": "x", "vote": ["card": 1]])).contains(
                #"members "rename", "vote", not one case"#))
        #expect(refusal(["addCard": ["at": 0]]) == #"not an action of this app: missing field "text" at /addCard"#)
        #expect(refusal("rename") == "not an action of this app: expected an object")
    }

    /// A reducer whose actions show their shapes.
    struct Shapes: Reducer {
        enum Action: Codable, Sendable, ActionExamples {
            case add(title: String, tags: [String])
            case move(card: Int, to: Double)
            case clear

            static let examples: [Action] = [.add(title: "", tags: [""]), .move(card: 0, to: 0.5), .clear]
        }

        var initialState: Int { 0 }

        func reduce(into state: inout Int, action: Action) throws(Rejection) -> Effect<Action> { .none }
    }

    @Test func anActionTypeWithExamplesListsEveryShapeItAccepts() throws {
        var store: any RoomStore = Store(reducer: Shapes())
        do {
            _ = try store.send(json: ["add": ["title": 1]])
            Issue.record("accepted an action of the wrong shape")
        } catch {
            #expect(
                error.message == #"not an action of this app: expected a string at /add/title; accepted: "#
                    + #"{"add":{"title":string,"tags":[string]}}, {"move":{"card":integer,"to":number}}, {"clear":{}}"#)
        }
    }
}

import LockstepCore
import LockstepJSON
import LockstepTesting
import Testing

/// `TestStore(_:app:migrating:fromStateVersion:)`: a stored state of an older version, migrated and decoded as a server
/// loading the room does, so a migration is unit-tested before any room meets it.
@MainActor @Suite struct TestStoreMigrationTests {
    /// Version 2 of a board: version 1's cards had a `text`, version 2 calls it `title` and adds `archived`.
    struct Board: Reducer {
        struct Card: Codable, Equatable, Sendable {
            var title: String
            var archived: Bool
        }
        struct State: Codable, Equatable, Sendable { var cards: [Card] = [] }
        enum Action: Codable, Equatable, Sendable { case archive(index: Int) }

        var initialState: State { State() }

        func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
            switch action {
            case .archive(let index):
                guard state.cards.indices.contains(index) else { throw Rejection("no card \(index)") }
                state.cards[index].archived = true
            }
            return .none
        }
    }

    static let board = App(
        "board", summary: "cards, version 2", reducer: Board(), stateVersion: 2,
        migrations: [
            Migration(from: 1) { state in
                try state.modifyEach("/cards") { card in
                    try card.renameMember("text", to: "title")
                    try card.setMember("archived", to: false)
                }
            }
        ])

    static let version1: JSON = ["cards": [["text": "milk"], ["text": "eggs"]]]

    @Test func aVersion1StateIsMigratedAndTheStoreRunsOnIt() throws {
        let store = try TestStore(Board(), app: Self.board, migrating: Self.version1, fromStateVersion: 1)
        #expect(
            store.state.cards == [
                Board.Card(title: "milk", archived: false), Board.Card(title: "eggs", archived: false),
            ])
        #expect(store.version == 0)
        store.send(.archive(index: 1)) { $0.cards[1].archived = true }
        #expect(store.version == 1)
    }

    @Test func aStateOfTheCurrentVersionIsNotMigrated() throws {
        let stored: JSON = ["cards": [["title": "milk", "archived": true]]]
        let store = try TestStore(Board(), app: Self.board, migrating: stored, fromStateVersion: 2)
        #expect(store.state.cards == [Board.Card(title: "milk", archived: true)])
    }

    /// A migration that forgets a field fails as the server's load would, saying what to do.
    @Test func aMigrationThatLeavesAFieldOutFailsLikeTheServersLoad() {
        let careless = App(
            "board", summary: "cards, a careless version 2", reducer: Board(), stateVersion: 2,
            migrations: [
                Migration(from: 1) { state in
                    try state.modifyEach("/cards") { card in try card.renameMember("text", to: "title") }
                }
            ])
        let error = #expect(throws: MigrationError.self) {
            try TestStore(Board(), app: careless, migrating: Self.version1, fromStateVersion: 1)
        }
        guard case .undecodable(let stateVersion, let reason)? = error else {
            Issue.record("expected undecodable, got \(String(describing: error))")
            return
        }
        #expect(stateVersion == 2)
        #expect(reason.contains("archived"), "\(reason)")
        #expect("\(error!)".contains("add a migration"))
        // The server's own load of the same state fails with the same error.
        #expect(throws: error!) {
            try careless.loadStore(state: Self.version1, stateVersion: 1, version: 0, history: History(depth: 10))
        }
    }

    @Test func aStateOfANewerVersionOrAThrowingMigrationIsRefused() {
        #expect(throws: MigrationError.newerThanApp(stored: 3, app: 2)) {
            try TestStore(Board(), app: Self.board, migrating: Self.version1, fromStateVersion: 3)
        }
        let error = #expect(throws: MigrationError.self) {
            // Version 1 cards are objects: a number is not one, and the migration's edit throws.
            try TestStore(Board(), app: Self.board, migrating: ["cards": [1]], fromStateVersion: 1)
        }
        guard case .failed(let from, _)? = error else {
            Issue.record("expected the migration to fail, got \(String(describing: error))")
            return
        }
        #expect(from == 1)
    }
}

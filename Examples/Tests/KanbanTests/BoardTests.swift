import Kanban
import LockstepCore
import LockstepJSON
import LockstepTesting
import Testing

/// The board as the server runs it (``Kanban/board``), through `TestStore`: every change stated exactly.
@MainActor struct BoardTests {
    let alice = ReducerContext(sender: Sender(client: "c1", subject: "alice"))
    let bob = ReducerContext(sender: Sender(client: "c2", subject: "bob"))

    @Test func aCardIsSignedWithItsAuthorsSubject() {
        let store = TestStore(Kanban.board)
        store.send(.add(title: "Write the README", column: 0), context: alice) {
            $0.columns[0].cards = [Board.Card(id: 1, title: "Write the README", author: "alice")]
            $0.nextId = 2
        }
        store.send(.move(id: 1, column: 2), context: bob) {
            $0.columns[0].cards = []
            $0.columns[2].cards = [Board.Card(id: 1, title: "Write the README", author: "alice")]
        }
        store.reject(
            .add(title: "anonymous", column: 0),
            message: "cards are signed with your token's subject: connect with a token that has a sub")
        store.reject(.add(title: "   ", column: 0), context: alice, message: "a card needs a title")
        store.reject(
            .add(title: "lost", column: 3), context: alice, message: "no column 3: the board has columns 0 to 2")
    }

    @Test func onlyTheAuthorDeletesACard() {
        let store = TestStore(Kanban.board)
        store.send(.add(title: "Alice's", column: 0), context: alice) {
            $0.columns[0].cards = [Board.Card(id: 1, title: "Alice's", author: "alice")]
            $0.nextId = 2
        }
        store.reject(.delete(id: 1), context: bob, message: "only alice may delete card 1")
        store.reject(.delete(id: 1), message: "only alice may delete card 1")
        store.send(.delete(id: 1), context: alice) { $0.columns[0].cards = [] }
        store.reject(.delete(id: 1), context: alice, message: "no card 1 on the board")
    }

    /// Undo mine takes back alice's own changes and leaves bob's: her card goes, his stays; her move is undone
    /// only while no one moved the card since.
    @Test func undoMineTakesBackOnlyTheSendersChanges() {
        let store = TestStore(Kanban.board)
        let first = Board.Card(id: 1, title: "first", author: "alice")
        let second = Board.Card(id: 2, title: "second", author: "bob")
        store.send(.add(title: "first", column: 0), context: alice) {
            $0.columns[0].cards = [first]
            $0.nextId = 2
        }
        store.send(.add(title: "second", column: 0), context: bob) {
            $0.columns[0].cards = [first, second]
            $0.nextId = 3
        }
        store.undoMine(as: alice) { $0.columns[0].cards = [second] }
        store.redoMine(as: alice) { $0.columns[0].cards = [first, second] }

        store.send(.move(id: 2, column: 1), context: alice) {
            $0.columns[0].cards = [first]
            $0.columns[1].cards = [second]
        }
        store.send(.add(title: "third", column: 1), context: bob) {
            $0.columns[1].cards = [second, Board.Card(id: 3, title: "third", author: "bob")]
            $0.nextId = 4
        }
        store.undoMine(as: alice) {
            $0.columns[0].cards = [first, second]
            $0.columns[1].cards = [Board.Card(id: 3, title: "third", author: "bob")]
        }
    }

    @Test func undoMineOfAMoveConflictsWhenTheCardMovedSince() {
        let store = TestStore(Kanban.board)
        let card = Board.Card(id: 1, title: "contested", author: "bob")
        store.send(.add(title: "contested", column: 0), context: bob) {
            $0.columns[0].cards = [card]
            $0.nextId = 2
        }
        store.send(.move(id: 1, column: 1), context: alice) {
            $0.columns[0].cards = []
            $0.columns[1].cards = [card]
        }
        store.send(.move(id: 1, column: 2), context: bob) {
            $0.columns[1].cards = []
            $0.columns[2].cards = [card]
        }
        var room = store.store
        #expect(throws: StoreError.conflict("card 1 was moved since")) { try room.undoMine(context: alice) }
        #expect(room.state.columns[2].cards == [card])
    }

    @Test func draftsAreEachUsersOwnUntilPublished() {
        let store = TestStore(Kanban.board)
        let draft = Board.Card(id: 1, title: "half an idea", author: "alice")
        store.send(.draft(title: "half an idea"), context: alice) {
            $0.drafts = ["alice": [draft]]
            $0.nextId = 2
        }
        store.reject(.publish(id: 1, column: 0), context: bob, message: "you have no draft 1")
        store.send(.publish(id: 1, column: 0), context: alice) {
            $0.drafts = ["alice": []]
            $0.columns[0].cards = [draft]
        }
    }

    /// The server shows `/drafts/alice` to alice alone; the rest of the board to everyone.
    @Test func draftsArePrivateToTheirOwner() throws {
        let parts = Kanban.app.privateParts
        #expect(parts.hides(try JSONPointer("/drafts/alice"), from: "bob"))
        #expect(parts.hides(try JSONPointer("/drafts/alice/0/title"), from: nil))
        #expect(!parts.hides(try JSONPointer("/drafts/alice"), from: "alice"))
        #expect(!parts.hides(try JSONPointer("/columns/0"), from: "bob"))
    }
}

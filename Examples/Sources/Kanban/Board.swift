public import LockstepCore

/// A shared kanban board: columns of cards that everyone in the room sees and moves, and a column of drafts per user
/// that only its owner sees (`/drafts/{sub}`, see ``Kanban/app``) until they publish a card to the board.
///
/// Every card is signed with the token subject (`sub`) of whoever wrote it, read from the ``ReducerContext``: the
/// server fills it in from the sender's token, so no client can sign a card with someone else's name.
public struct Board: ContextualReducer {
    public struct State: Codable, Equatable, Sendable {
        /// The shared columns, left to right.
        public var columns: [Column]
        /// Each user's drafts, by token subject: the server shows `/drafts/alice` to alice alone.
        public var drafts: [String: [Card]]
        /// The id of the next card: ids come from the state, so every client agrees on them.
        public var nextId: Int

        public init(columns: [Column], drafts: [String: [Card]] = [:], nextId: Int = 1) {
            self.columns = columns
            self.drafts = drafts
            self.nextId = nextId
        }
    }

    public struct Column: Codable, Equatable, Sendable {
        public var name: String
        public var cards: [Card]

        public init(name: String, cards: [Card] = []) {
            self.name = name
            self.cards = cards
        }
    }

    public struct Card: Codable, Equatable, Sendable, Identifiable {
        public var id: Int
        public var title: String
        /// The token subject of whoever wrote it.
        public var author: String

        public init(id: Int, title: String, author: String) {
            self.id = id
            self.title = title
            self.author = author
        }
    }

    /// What clients send, with Swift's synthesized `Codable`: `{"add":{"title":"Ship it","column":0}}`.
    public enum Action: Codable, Equatable, Sendable {
        /// A new card at the bottom of a column.
        case add(title: String, column: Int)
        /// A card to the bottom of another column.
        case move(id: Int, column: Int)
        /// Removes a card from the board; only its author may (see ``Kanban/board``).
        case delete(id: Int)
        /// A new card in the sender's own drafts, seen by no one else.
        case draft(title: String)
        /// One of the sender's drafts to the bottom of a column, where everyone sees it.
        case publish(id: Int, column: Int)
    }

    /// Longest title a card may have, in characters.
    public static let titleLimit = 200

    public init() {}

    public var initialState: State {
        State(columns: ["To do", "Doing", "Done"].map { Column(name: $0) })
    }

    public func reduce(
        into state: inout State, action: Action, context: ReducerContext
    ) throws(Rejection) -> Effect<Action> {
        switch action {
        case .add(let title, let column):
            let card = Card(id: state.nextId, title: try Self.checked(title), author: try Self.author(context))
            try state.checkColumn(column)
            state.columns[column].cards.append(card)
            state.nextId += 1
        case .move(let id, let column):
            try state.checkColumn(column)
            let (from, index) = try state.place(of: id)
            let card = state.columns[from].cards.remove(at: index)
            state.columns[column].cards.append(card)
        case .delete(let id):
            let (column, index) = try state.place(of: id)
            state.columns[column].cards.remove(at: index)
        case .draft(let title):
            let card = Card(id: state.nextId, title: try Self.checked(title), author: try Self.author(context))
            state.drafts[card.author, default: []].append(card)
            state.nextId += 1
        case .publish(let id, let column):
            try state.checkColumn(column)
            let author = try Self.author(context)
            guard let index = state.drafts[author]?.firstIndex(where: { $0.id == id }) else {
                throw Rejection("you have no draft \(id)")
            }
            let card = state.drafts[author]!.remove(at: index)
            state.columns[column].cards.append(card)
        }
        return .none
    }

    /// The sender's token subject: cards are signed with it.
    private static func author(_ context: ReducerContext) throws(Rejection) -> String {
        guard let subject = context.sender?.subject else {
            throw Rejection("cards are signed with your token's subject: connect with a token that has a sub")
        }
        return subject
    }

    private static func checked(_ title: String) throws(Rejection) -> String {
        guard title.contains(where: { !$0.isWhitespace }) else { throw Rejection("a card needs a title") }
        guard title.count <= titleLimit else { throw Rejection("a title has at most \(titleLimit) characters") }
        return title
    }
}

extension Board.State {
    /// The card `id` on the board, if it is there.
    public func card(_ id: Int) -> Board.Card? {
        columns.lazy.flatMap(\.cards).first { $0.id == id }
    }

    /// Where card `id` is: its column and its index in it.
    func place(of id: Int) throws(Rejection) -> (column: Int, index: Int) {
        for (column, cards) in columns.map(\.cards).enumerated() {
            if let index = cards.firstIndex(where: { $0.id == id }) { return (column, index) }
        }
        throw Rejection("no card \(id) on the board")
    }

    func checkColumn(_ column: Int) throws(Rejection) {
        guard columns.indices.contains(column) else {
            throw Rejection("no column \(column): the board has columns 0 to \(columns.count - 1)")
        }
    }
}

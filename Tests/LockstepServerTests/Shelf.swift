import LockstepCore
import LockstepJSON

/// An app whose state changed shape between two versions, as a real one's does: version 1 keeps books with a
/// `title`; version 2 calls it `name`, adds `read` to every book and an `owner` to the shelf.
enum Shelf {
    /// Version 1: books with a title.
    struct V1: Reducer {
        struct Book: Codable, Equatable, Sendable { var title: String }
        struct State: Codable, Equatable, Sendable { var books: [Book] = [] }
        enum Action: Codable, Sendable { case add(title: String) }

        var initialState: State { State() }

        func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
            switch action {
            case .add(let title): state.books.append(Book(title: title))
            }
            return .none
        }
    }

    /// Version 2: a book's `title` is its `name`, it can be `read`, and the shelf has an `owner`.
    struct V2: Reducer {
        struct Book: Codable, Equatable, Sendable {
            var name: String
            var read: Bool
        }
        struct State: Codable, Equatable, Sendable {
            var books: [Book] = []
            var owner = "nobody"
        }
        /// Adding a book still says `title`: clients of version 1 keep working.
        enum Action: Codable, Sendable {
            case add(title: String)
            case markRead(index: Int)
        }

        var initialState: State { State() }

        func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
            switch action {
            case .add(let title): state.books.append(Book(name: title, read: false))
            case .markRead(let index):
                guard state.books.indices.contains(index) else { throw Rejection("no book \(index)") }
                state.books[index].read = true
            }
            return .none
        }
    }

    /// The migration a developer writes for version 2.
    static let migrations = [
        Migration(from: 1) { state in
            try state.setMember("owner", to: "nobody")
            try state.modifyEach("/books") { book in
                try book.renameMember("title", to: "name")
                try book.setMember("read", to: false)
            }
        }
    ]

    static let v1 = App("shelf", summary: "books, version 1", reducer: V1())
    static let v2 = App("shelf", summary: "books, version 2", reducer: V2(), stateVersion: 2, migrations: migrations)
    /// Version 2 with a migration that forgets the books' renamed field: stored rooms do not decode.
    static let careless = App(
        "shelf", summary: "books, a careless version 2", reducer: V2(), stateVersion: 2,
        migrations: [Migration(from: 1) { state in try state.setMember("owner", to: "nobody") }])

    /// Version 2's `State` without a new state version, as a developer who forgot it would run it.
    static let forgetful = App("shelf", summary: "books, version 2 under version 1", reducer: V2())

    /// The action adding a book, in either version.
    static func add(_ title: String) -> JSON { ["add": ["title": .string(title)]] }

    /// The state version 2 has for books stored by version 1 under `titles`.
    static func migrated(_ titles: [String], read: Set<Int> = []) -> JSON {
        let books = titles.enumerated().map { index, title -> JSON in
            ["name": .string(title), "read": .bool(read.contains(index))]
        }
        return ["books": .array(books), "owner": "nobody"]
    }
}

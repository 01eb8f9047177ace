public import LockstepCore

/// The `todos` app: a shared to-do list.
///
/// Shows the shape of a real app: a list of identified items, domain rules that reject bad
/// actions, and ids handed out by the state itself so every client agrees on them.
public struct Todos: Reducer {
    public struct State: Codable, Equatable, Sendable {
        public var items: [Item]
        public var nextId: Int

        public init(items: [Item] = [], nextId: Int = 1) {
            self.items = items
            self.nextId = nextId
        }
    }

    public struct Item: Codable, Equatable, Sendable, Identifiable {
        public var id: Int
        public var title: String
        public var done: Bool

        public init(id: Int, title: String, done: Bool = false) {
            self.id = id
            self.title = title
            self.done = done
        }
    }

    public enum Action: Codable, Equatable, Sendable {
        case add(title: String)
        case toggle(id: Int)
        case rename(id: Int, title: String)
        case remove(id: Int)
        case clearCompleted
    }

    public init() {}

    public var initialState: State { State() }

    public func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
        switch action {
        case .add(let title):
            try Self.validate(title)
            state.items.append(Item(id: state.nextId, title: title))
            state.nextId += 1
        case .toggle(let id):
            state.items[try state.index(of: id)].done.toggle()
        case .rename(let id, let title):
            try Self.validate(title)
            state.items[try state.index(of: id)].title = title
        case .remove(let id):
            state.items.remove(at: try state.index(of: id))
        case .clearCompleted:
            state.items.removeAll(where: \.done)
        }
        return .none
    }

    private static func validate(_ title: String) throws(Rejection) {
        guard title.contains(where: { !$0.isWhitespace }) else { throw Rejection("a title cannot be empty") }
    }
}

extension Todos.State {
    fileprivate func index(of id: Int) throws(Rejection) -> Int {
        guard let index = items.firstIndex(where: { $0.id == id }) else { throw Rejection("no todo with id \(id)") }
        return index
    }
}

extension Todos.Action {
    private enum CodingKeys: String, CodingKey {
        case type, id, title
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "add": self = .add(title: try container.decode(String.self, forKey: .title))
        case "toggle": self = .toggle(id: try container.decode(Int.self, forKey: .id))
        case "rename":
            self = .rename(
                id: try container.decode(Int.self, forKey: .id),
                title: try container.decode(String.self, forKey: .title)
            )
        case "remove": self = .remove(id: try container.decode(Int.self, forKey: .id))
        case "clearCompleted": self = .clearCompleted
        default: throw ActionType.unknown(type, container: container, codingKey: .type)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .add(let title):
            try container.encode("add", forKey: .type)
            try container.encode(title, forKey: .title)
        case .toggle(let id):
            try container.encode("toggle", forKey: .type)
            try container.encode(id, forKey: .id)
        case .rename(let id, let title):
            try container.encode("rename", forKey: .type)
            try container.encode(id, forKey: .id)
            try container.encode(title, forKey: .title)
        case .remove(let id):
            try container.encode("remove", forKey: .type)
            try container.encode(id, forKey: .id)
        case .clearCompleted:
            try container.encode("clearCompleted", forKey: .type)
        }
    }
}

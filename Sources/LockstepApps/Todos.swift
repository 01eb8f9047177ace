public import LockstepCore
import LockstepJSON

/// The `todos` app: a shared to-do list.
///
/// Shows the shape of a real app: a list of identified items, domain rules that reject bad
/// actions, and ids handed out by the state itself so every client agrees on them.
public struct Todos: PatchingReducer {
    public struct State: Codable, Equatable, Sendable {
        /// The list, in the order items were added.
        public var items: [Item]
        /// The id the next added item gets: the state hands ids out, so every client agrees on them.
        public var nextId: Int

        /// A list of `items`; a new room starts empty, with `nextId` 1.
        public init(items: [Item] = [], nextId: Int = 1) {
            self.items = items
            self.nextId = nextId
        }
    }

    /// One to-do: `{"id":N,"title":"...","done":false}` in the room's JSON state.
    public struct Item: Codable, Equatable, Sendable, Identifiable {
        public var id: Int
        /// What to do; never empty nor all whitespace.
        public var title: String
        /// Whether it is done; `toggle` flips it, `clearCompleted` removes the done items.
        public var done: Bool

        /// An item with `id`, `title`, not done unless `done` says so.
        public init(id: Int, title: String, done: Bool = false) {
            self.id = id
            self.title = title
            self.done = done
        }
    }

    public enum Action: Codable, Equatable, Sendable {
        /// Appends a new item with `title` and the next id; `{"type":"add","title":"..."}`.
        case add(title: String)
        /// Flips the `done` of the item `id`; `{"type":"toggle","id":N}`.
        case toggle(id: Int)
        /// Sets the title of the item `id`; `{"type":"rename","id":N,"title":"..."}`.
        case rename(id: Int, title: String)
        /// Removes the item `id`; `{"type":"remove","id":N}`.
        case remove(id: Int)
        /// Removes every done item; `{"type":"clearCompleted"}`.
        case clearCompleted
    }

    /// The to-do app, as `--app todos` runs it.
    public init() {}

    public var initialState: State { State() }

    /// Changes the list in place and says what changed, so a long list costs no more than a short one.
    public func patch(_ state: inout State, with action: Action) throws(Rejection) -> Reduction<Action> {
        switch action {
        case .add(let title):
            try Self.validate(title)
            let item = Item(id: state.nextId, title: title)
            let index = state.items.count
            state.items.append(item)
            state.nextId += 1
            return Reduction(
                forward: JSONPatch([
                    .add(path: State.item(index), value: item.json),
                    .replace(path: State.nextIdPath, value: .int(state.nextId)),
                ]),
                inverse: JSONPatch([
                    .replace(path: State.nextIdPath, value: .int(item.id)), .remove(path: State.item(index)),
                ]))
        case .toggle(let id):
            let index = try state.index(of: id)
            state.items[index].done.toggle()
            let done = state.items[index].done
            let path = State.item(index, "done")
            return Reduction(
                forward: JSONPatch([.replace(path: path, value: .bool(done))]),
                inverse: JSONPatch([.replace(path: path, value: .bool(!done))]))
        case .rename(let id, let title):
            try Self.validate(title)
            let index = try state.index(of: id)
            let old = state.items[index].title
            guard old != title else { return Reduction(forward: JSONPatch(), inverse: JSONPatch()) }
            state.items[index].title = title
            let path = State.item(index, "title")
            return Reduction(
                forward: JSONPatch([.replace(path: path, value: .string(title))]),
                inverse: JSONPatch([.replace(path: path, value: .string(old))]))
        case .remove(let id):
            let index = try state.index(of: id)
            let removed = state.items.remove(at: index)
            return Reduction(
                forward: JSONPatch([.remove(path: State.item(index))]),
                inverse: JSONPatch([.add(path: State.item(index), value: removed.json)]))
        case .clearCompleted:
            // Last first, so every index still names the item it did when the patch was made.
            let indices = state.items.indices.filter { state.items[$0].done }.reversed()
            let removed = indices.map { state.items[$0] }
            state.items.removeAll(where: \.done)
            return Reduction(
                forward: JSONPatch(indices.map { .remove(path: State.item($0)) }),
                inverse: JSONPatch(zip(indices, removed).reversed().map { .add(path: State.item($0), value: $1.json) }))
        }
    }

    private static func validate(_ title: String) throws(Rejection) {
        guard title.contains(where: { !$0.isWhitespace }) else { throw Rejection("a title cannot be empty") }
    }
}

extension Todos.State {
    fileprivate static let nextIdPath = JSONPointer(tokens: ["nextId"])

    /// `/items/index`, then `tokens`.
    fileprivate static func item(_ index: Int, _ tokens: String...) -> JSONPointer {
        JSONPointer(tokens: ["items", String(index)] + tokens)
    }

    fileprivate func index(of id: Int) throws(Rejection) -> Int {
        guard let index = items.firstIndex(where: { $0.id == id }) else { throw Rejection("no todo with id \(id)") }
        return index
    }
}

extension Todos.Item {
    /// The item as its `Codable` conformance encodes it, built directly: encoding cannot fail here.
    var json: JSON { ["id": .int(id), "title": .string(title), "done": .bool(done)] }
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

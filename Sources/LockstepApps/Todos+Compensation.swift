public import LockstepCore

/// Undo mine for the list: each action is taken back by what it did to its items, on top of others' later changes.
///
/// `add` by removing that item (by id); `toggle` by setting `done` back; `rename` by restoring the old title;
/// `remove` and `clearCompleted` by putting the items back, same id, title and done, at their old index (or the end
/// of a shorter list). A `conflict` when an item is gone, or when the field being restored was changed since.
extension Todos: CompensatingReducer {
    /// How a change to the list is taken back; each one's own is taken back in turn by the opposite one (redo mine).
    public enum Compensation: Codable, Equatable, Sendable {
        /// Removes these items (by id).
        case remove(ids: [Int])
        /// Puts these items back at their indices, lowest first.
        case restore([Placed])
        /// Sets an item's `done` to `done`, if it still holds the opposite.
        case setDone(id: Int, done: Bool)
        /// Sets an item's title to `title`, if it is still `expected`.
        case setTitle(id: Int, title: String, expected: String)
    }

    /// An item and the index it had.
    public struct Placed: Codable, Equatable, Sendable {
        /// Where the item was in the list when the action removed it.
        public var index: Int
        /// The item as it was: same id, title and done.
        public var item: Item
    }

    public func compensation(for action: Action, in state: State) -> Compensation? {
        switch action {
        case .add:
            return .remove(ids: [state.nextId])
        case .toggle(let id):
            return state.items.first { $0.id == id }.map { .setDone(id: id, done: $0.done) }
        case .rename(let id, let title):
            return state.items.first { $0.id == id }.map { .setTitle(id: id, title: $0.title, expected: title) }
        case .remove(let id):
            return state.items.firstIndex { $0.id == id }.map { .restore([Placed(index: $0, item: state.items[$0])]) }
        case .clearCompleted:
            let done = state.items.indices.filter { state.items[$0].done }
            return .restore(done.map { Placed(index: $0, item: state.items[$0]) })
        }
    }

    public func compensate(_ state: inout State, with compensation: Compensation) throws(Conflict) -> Compensation? {
        switch compensation {
        case .remove(let ids):
            var placed: [Placed] = []
            for id in ids {
                guard let index = state.items.firstIndex(where: { $0.id == id }) else {
                    throw Conflict("todo \(id) was removed since")
                }
                placed.append(Placed(index: index, item: state.items[index]))
            }
            placed.sort { $0.index < $1.index }
            for entry in placed.reversed() { state.items.remove(at: entry.index) }
            return .restore(placed)
        case .restore(let placed):
            for entry in placed where state.items.contains(where: { $0.id == entry.item.id }) {
                throw Conflict("todo \(entry.item.id) is in the list again")
            }
            for entry in placed { state.items.insert(entry.item, at: min(entry.index, state.items.count)) }
            return .remove(ids: placed.map(\.item.id))
        case .setDone(let id, let done):
            let index = try Self.index(of: id, in: state)
            guard state.items[index].done != done else { throw Conflict("todo \(id) was toggled since") }
            state.items[index].done = done
            return .setDone(id: id, done: !done)
        case .setTitle(let id, let title, let expected):
            let index = try Self.index(of: id, in: state)
            guard state.items[index].title == expected else { throw Conflict("todo \(id) was renamed since") }
            state.items[index].title = title
            return .setTitle(id: id, title: expected, expected: title)
        }
    }

    private static func index(of id: Int, in state: State) throws(Conflict) -> Int {
        guard let index = state.items.firstIndex(where: { $0.id == id }) else {
            throw Conflict("todo \(id) was removed since")
        }
        return index
    }
}

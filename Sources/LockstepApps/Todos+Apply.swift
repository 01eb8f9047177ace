public import LockstepCore
public import LockstepJSON

extension Todos {
    /// Undo and redo in place for the patches ``patch(_:with:)`` makes: one item's `done` or `title`, an item
    /// added or removed, `nextId`. Any other patch goes through the state's JSON, as for any reducer.
    ///
    /// Every operation is checked before the first one is applied, so a patch applies whole or not at all.
    public func apply(_ patch: JSONPatch, to state: inout State) throws(StoreError) {
        guard let steps = Self.steps(of: patch, itemCount: state.items.count) else {
            try applyThroughJSON(patch, to: &state)
            return
        }
        for step in steps {
            switch step {
            case .done(let index, let done): state.items[index].done = done
            case .title(let index, let title): state.items[index].title = title
            case .insert(let index, let item): state.items.insert(item, at: index)
            case .remove(let index): state.items.remove(at: index)
            case .nextId(let id): state.nextId = id
            }
        }
    }

    /// One operation of a todos patch, read as a change to the typed state.
    private enum Step {
        case done(Int, Bool)
        case title(Int, String)
        case insert(Int, Item)
        case remove(Int)
        case nextId(Int)
    }

    /// The patch as steps, each checked against the item count it meets; nil for anything else.
    private static func steps(of patch: JSONPatch, itemCount: Int) -> [Step]? {
        var count = itemCount
        var steps: [Step] = []
        steps.reserveCapacity(patch.operations.count)
        for operation in patch.operations {
            let tokens = operation.path.tokens
            if tokens == ["nextId"], case .replace(_, .int(let id)) = operation {
                steps.append(.nextId(id))
                continue
            }
            guard tokens.count >= 2, tokens[0] == "items", let index = JSONPointer.arrayIndex(tokens[1]) else {
                return nil
            }
            switch (operation, tokens.count > 2 ? tokens[2] : nil) {
            case (.replace(_, .bool(let done)), "done") where tokens.count == 3 && index < count:
                steps.append(.done(index, done))
            case (.replace(_, .string(let title)), "title") where tokens.count == 3 && index < count:
                steps.append(.title(index, title))
            case (.add(_, let value), nil) where index <= count:
                guard let item = Item(json: value) else { return nil }
                steps.append(.insert(index, item))
                count += 1
            case (.remove, nil) where index < count:
                steps.append(.remove(index))
                count -= 1
            default:
                return nil
            }
        }
        return steps
    }
}

extension Todos.Item {
    /// Reads exactly the JSON ``json`` writes; nil for anything else.
    fileprivate init?(json: JSON) {
        guard case .object(let object) = json, object.count == 3,
            case .int(let id)? = object["id"], case .string(let title)? = object["title"],
            case .bool(let done)? = object["done"]
        else { return nil }
        self.init(id: id, title: title, done: done)
    }
}

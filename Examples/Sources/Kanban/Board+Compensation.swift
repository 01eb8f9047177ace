public import LockstepCore

/// Undo mine for the board: a user takes back their own last change while others keep theirs.
///
/// `add` is taken back by deleting that card (by id), `delete` by putting the card back where it was, `move` by
/// moving it back if no one moved it since. Drafts and publishing have none: they are taken back by their inverse
/// patch, while what they wrote is unchanged.
extension Board: CompensatingReducer {
    public enum Compensation: Codable, Equatable, Sendable {
        /// Deletes card `id`.
        case remove(id: Int)
        /// Puts `card` back into `column` at `index` (or its end).
        case restore(card: Card, column: Int, index: Int)
        /// Moves card `id` to `column` at `index`, if it is still in `expected`.
        case move(id: Int, column: Int, index: Int, expected: Int)
    }

    public func compensation(for action: Action, in state: State) -> Compensation? {
        switch action {
        case .add:
            return .remove(id: state.nextId)
        case .move(let id, let column):
            guard let place = try? state.place(of: id) else { return nil }
            return .move(id: id, column: place.column, index: place.index, expected: column)
        case .delete(let id):
            guard let place = try? state.place(of: id) else { return nil }
            return .restore(
                card: state.columns[place.column].cards[place.index], column: place.column, index: place.index)
        case .draft, .publish:
            return nil
        }
    }

    public func compensate(_ state: inout State, with compensation: Compensation) throws(Conflict) -> Compensation? {
        switch compensation {
        case .remove(let id):
            guard let place = try? state.place(of: id) else { throw Conflict("card \(id) was deleted since") }
            let card = state.columns[place.column].cards.remove(at: place.index)
            return .restore(card: card, column: place.column, index: place.index)
        case .restore(let card, let column, let index):
            guard state.card(card.id) == nil else { throw Conflict("card \(card.id) is on the board again") }
            state.columns[column].cards.insert(card, at: min(index, state.columns[column].cards.count))
            return .remove(id: card.id)
        case .move(let id, let column, let index, let expected):
            guard let place = try? state.place(of: id) else { throw Conflict("card \(id) was deleted since") }
            guard place.column == expected else { throw Conflict("card \(id) was moved since") }
            let card = state.columns[place.column].cards.remove(at: place.index)
            state.columns[column].cards.insert(card, at: min(index, state.columns[column].cards.count))
            return .move(id: id, column: place.column, index: place.index, expected: column)
        }
    }
}

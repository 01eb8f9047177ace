public import LockstepCore

/// The kanban app as the server runs it: ``Board`` with its rules in front and its private drafts.
public enum Kanban {
    /// The board with the rule that only a card's author may delete it. The rule reads the sender from the context,
    /// so it holds whatever a client sends; kept in front of the reducer, it composes with other rules.
    public static let board = Board().middleware { state, action, context throws(Rejection) in
        if case .delete(let id) = action, let card = state.card(id), card.author != context.sender?.subject {
            throw Rejection("only \(card.author) may delete card \(id)")
        }
        return action
    }

    /// Each user's drafts, visible to that user alone: `/drafts/alice` only to a token with `"sub":"alice"`.
    public static let privateDrafts: PrivateParts = {
        // A constant pattern, valid by construction.
        try! PrivateParts(["/drafts/{sub}"])
    }()

    /// What `kanban-server serve` runs (`--app kanban`).
    public static let app = App(
        "kanban", summary: "a shared kanban board with private drafts", reducer: board, privateParts: privateDrafts)
}

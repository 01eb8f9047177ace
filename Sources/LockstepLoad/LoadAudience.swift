/// Which of `lockstep load`'s clients an action reaches, so a run whose clients follow views or private parts can
/// still tell a skipped version (not theirs to see) from a lost one.
enum LoadAudience: Hashable, Sendable {
    /// Every client: the action changed public state outside every view's path.
    case everyone
    /// The clients following view `/p<index>`, and those following the whole room.
    case view(Int)
    /// Only client `index` (the writer itself): the action changed inside its own private part.
    case owner(Int)

    /// Whether the client numbered `client`, following view `view` (nil: the whole room), gets the action's patch.
    func reaches(client: Int, view: Int?) -> Bool {
        switch self {
        case .everyone: true
        case .view(let index): view == nil || view == index
        case .owner(let index): client == index
        }
    }
}

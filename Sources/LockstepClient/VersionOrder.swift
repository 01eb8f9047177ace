import LockstepJSON

/// How the versions of a mirror's patches follow each other, chosen once from the room's address.
///
/// A whole room's patches come one version at a time, so a skipped version means the mirror missed a change and
/// must resynchronise. A view (`path=`) only receives the changes that touch it, and a client with a token may be in
/// a room with private parts, where changes it may not see send it nothing: there versions only increase, and the
/// server's rule is that applying a patch to the previous state gives the state at the patch's version.
enum VersionOrder: Sendable, Equatable {
    /// Every version arrives, in order.
    case contiguous
    /// Versions increase; the ones in between changed nothing this client sees.
    case increasing

    /// `increasing` for a view or a connection carrying a token (private parts need tokens), else `contiguous`.
    init(url: RoomURL) {
        self = !url.path.isRoot || url.hasToken ? .increasing : .contiguous
    }

    /// Whether a patch at `version` may follow the mirror at `current`.
    func accepts(_ version: Int, after current: Int) -> Bool {
        switch self {
        case .contiguous: version == current + 1
        case .increasing: version > current
        }
    }
}

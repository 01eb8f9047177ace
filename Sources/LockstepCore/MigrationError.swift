/// Why a stored state could not be brought to the app's current state version.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A migration threw: it does not know how to bring this state forward.
    case failed(from: Int, reason: String)
    /// The state was stored by a newer version of the app than this server runs.
    case newerThanApp(stored: Int, app: Int)
    /// The state, migrated, still does not decode as the app's `State`.
    case undecodable(stateVersion: Int, reason: String)

    public var description: String {
        switch self {
        case .failed(let from, let reason):
            "the migration from state version \(from) to \(from + 1) failed: \(reason); fix that migration"
        case .newerThanApp(let stored, let app):
            "it was stored in state version \(stored), newer than this app's \(app); run the newer server"
        case .undecodable(let stateVersion, let reason):
            "it does not decode as the app's State (state version \(stateVersion)): \(reason); add a migration "
                + "that brings it to this shape, or make the field optional"
        }
    }
}

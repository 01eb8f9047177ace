/// Who may act on everyone's changes in an app's rooms (global `undo`, `redo` and `revert`): any writer, or only
/// tokens with the `admin` role (a referee), while `undo mine` and `redo mine` stay open to every writer. The stricter
/// of the app's and the server's `--history-role` applies.
public enum HistoryRole: String, Sendable, CaseIterable {
    /// Any writer, as in protocol 1.2.
    case write
    /// Only `admin` tokens.
    case admin
}

/// Where a client keeps its session, its outbox and its last confirmed state, so an app that quits (or is killed)
/// starts again where it stopped: the state shows at once, before any network is there, and the requests it had
/// not seen answered are sent, each applied once, when the server answers.
///
/// ```swift
/// let room = try RoomClient(url: url, keep: KeepDirectory("/var/lib/myapp/rooms", app: "todos"))
/// ```
///
/// The directory holds one file per room (and per followed path), replaced atomically on every change, so a crash
/// leaves either the old file or the new one. A file that cannot be read, or was kept for another room, session, app
/// or history of the room (epoch), is renamed with a `.set-aside-` suffix, logged, and the client starts fresh.
public struct KeepDirectory: Sendable, Equatable {
    /// The directory; created (with its parents) when missing.
    public var path: String
    /// What the rooms kept here hold (the app's or reducer's name): a file kept for another app is set aside rather
    /// than shown as this one's state.
    public var app: String

    /// Keeps rooms in the directory at `path`, for `app`.
    public init(_ path: String, app: String = "") {
        self.path = path
        self.app = app
    }
}

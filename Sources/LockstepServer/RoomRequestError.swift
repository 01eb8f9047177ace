/// Why a request sent from Swift (``SyncServer/send(_:to:from:)``) or a read (``SyncServer/state(of:)``) did not
/// succeed: the protocol's error code and its words, as a WebSocket client would get them.
public struct RoomRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The protocol's code: `rejected`, `invalid_action`, `nothing_to_undo`, `forbidden`, `unavailable`, ...
    public let code: String
    /// What went wrong, for people.
    public let message: String

    /// An error of `code`, in `message`'s words.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

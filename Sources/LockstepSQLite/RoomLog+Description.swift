/// A log names itself by its directory, as `lockstep serve --data` was given it (in the server's start line).
extension RoomLog: CustomStringConvertible {
    public var description: String { directory }
}

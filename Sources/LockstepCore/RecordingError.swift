/// Why bytes are not a recording (`GET /rooms/ROOM/log` output), or why replaying one went wrong.
public enum RecordingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No line at all.
    case empty
    /// The first line is not a `snapshot` with a version.
    case notASnapshot
    /// Line `number` (from 1) is not JSON or not a `patch` message.
    case badLine(Int, String)
    /// The patches skip a version.
    case gap(expected: Int, found: Int)

    public var description: String {
        switch self {
        case .empty: "the recording is empty; save the output of GET /rooms/ROOM/log"
        case .notASnapshot: "the recording's first line is not a snapshot with a version"
        case .badLine(let number, let reason): "line \(number) of the recording is not a patch message: \(reason)"
        case .gap(let expected, let found): "the recording skips from version \(expected - 1) to \(found)"
        }
    }
}

/// How the lines of a recording, and of a followed room, go on the wire.
///
/// - `ndjson` (`application/x-ndjson`): one JSON object per line; a follower may get empty lines to keep its
///   connection alive.
/// - `serverSentEvents` (`text/event-stream`, for a follower whose `Accept` names it): each line as one event,
///   `id: VERSION`, `data: LINE` and a blank line, the snapshot's id being the snapshot's version; a comment line keeps
///   the connection alive.
enum RecordingFormat {
    case ndjson
    case serverSentEvents

    /// The Content-Type of the response.
    var contentType: String {
        switch self {
        case .ndjson: "application/x-ndjson"
        case .serverSentEvents: "text/event-stream"
        }
    }

    /// Appends `line`, the message of `version`, to `bytes`.
    func append(_ line: some Collection<UInt8>, version: Int, to bytes: inout [UInt8]) {
        switch self {
        case .ndjson:
            bytes += line
            bytes.append(10)
        case .serverSentEvents:
            bytes += "id: \(version)\ndata: ".utf8
            bytes += line
            bytes += [10, 10]
        }
    }

    /// What a follower gets when nothing else is sent for a while, which readers skip: an empty line, or a comment.
    var keepAlive: [UInt8] {
        switch self {
        case .ndjson: [10]
        case .serverSentEvents: Array(": keepalive\n\n".utf8)
        }
    }
}

import DequeModule
import LockstepStorage
import LockstepTransport

/// The patch lines of a recording, read a page at a time as the client takes them: from the log for old versions,
/// from the room's recent patches for the rest, so a long history is never held in memory whole.
///
/// Loop-bound: ``next()`` runs on the loop thread, where the transport pulls the body.
final class RecordingStream {
    /// Patches per log read, and the most bytes handed to the transport at once.
    static let pageSize = 256
    static let pieceBytes = 64 << 10

    private var pending: [UInt8]
    private var nextVersion: Int
    private let lastVersion: Int
    private let roomName: String
    private let log: (any RoomStorage)?
    /// The room's recent patches when the recording started; later trimming of the room's own copy does not touch it.
    private let recent: Deque<Room.LoggedPatch>

    /// A recording of `room` whose first line, `snapshotLine`, is the state at `version`; it ends at the room's
    /// released version now.
    init(room: Room, after version: Int, snapshotLine: [UInt8], log: (any RoomStorage)?) {
        pending = snapshotLine + [10]
        nextVersion = version + 1
        lastVersion = room.releasedVersion
        roomName = room.name
        self.log = log
        recent = room.log
    }

    func next() -> HTTPBodyStream.Piece {
        while pending.count < Self.pieceBytes && nextVersion <= lastVersion {
            guard readPage() else { return .failed }
        }
        guard !pending.isEmpty else { return .end }
        defer { pending.removeAll(keepingCapacity: true) }
        return .bytes(pending)
    }

    /// Appends the next patches to `pending`; false when a version is in neither memory nor the log (the log was
    /// compacted while the recording streamed).
    private func readPage() -> Bool {
        if let first = recent.first?.version, first <= nextVersion {
            let start = nextVersion - first
            let end = min(recent.count, start + Self.pageSize, lastVersion - first + 1)
            guard start < end else { return false }
            for patch in recent[start..<end] {
                pending += patch.frame.payload
                pending.append(10)
            }
            nextVersion = recent[end - 1].version + 1
            return true
        }
        let through = min(lastVersion, (recent.first?.version ?? lastVersion + 1) - 1)
        guard
            let page = try? log?.changes(room: roomName, after: nextVersion - 1, through: through, limit: Self.pageSize),
            page.first?.version == nextVersion
        else {
            return false
        }
        for change in page {
            guard change.version == nextVersion else { return false }
            pending += change.message
            pending.append(10)
            nextVersion += 1
        }
        return true
    }
}

@available(*, unavailable)
extension RecordingStream: Sendable {}

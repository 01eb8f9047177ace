import DequeModule
import LockstepStorage
import LockstepTransport

/// The patch lines of a recording, read a page at a time as the client takes them: from storage for old versions,
/// from the room's recent patches for the rest, so a long history is never held in memory whole.
///
/// Loop-bound: ``next()`` runs on the loop thread, where the transport pulls the body; a page of storage is read off
/// it, and the body resumes when it arrives.
final class RecordingStream {
    /// Reads a page of stored changes (after, through, limit) and hands it, or nil when storage fails, to the
    /// callback on the loop thread.
    typealias PageReader = (Int, Int, Int, @escaping ([StoredChange]?) -> Void) -> Void

    /// Patches per storage read, and the most bytes handed to the transport at once.
    static let pageSize = 256
    static let pieceBytes = 64 << 10

    /// The body this stream feeds, resumed when a page read from storage arrives.
    weak var body: HTTPBodyStream?
    private var pending: [UInt8] = []
    private var nextVersion: Int
    /// The newest version the recording holds: the room's released version when it started.
    let lastVersion: Int
    /// How each line goes on the wire.
    private let format: RecordingFormat
    private let readPage: PageReader
    /// The room's recent patches when the recording started; later trimming of the room's own copy does not touch it.
    private let recent: Deque<Room.LoggedPatch>
    /// Each patch line as the reader gets it: projected when the room has private parts, else as it is.
    var lines: any RecordingLines = WholeRoom()
    /// A page read from storage: waiting for it, or it failed.
    private var reading = false
    private var failed = false

    /// A recording of `room` whose first line, `snapshotLine`, is the state at `version`; it ends at the room's
    /// released version now. Its lines go on the wire as `format` has them.
    init(
        room: Room, after version: Int, snapshotLine: [UInt8], format: RecordingFormat = .ndjson,
        readPage: @escaping PageReader
    ) {
        nextVersion = version + 1
        lastVersion = room.releasedVersion
        self.format = format
        self.readPage = readPage
        recent = room.engine.released.recent
        format.append(snapshotLine, version: version, to: &pending)
    }

    /// The next piece of the body, for the transport: lines up to ``pieceBytes``, `.later` while a page is read from
    /// storage, `.end` after the last version.
    func next() -> HTTPBodyStream.Piece {
        guard !failed else { return .failed }
        guard !reading else { return .later }
        while pending.count < Self.pieceBytes && nextVersion <= lastVersion && !failed {
            guard takeRecent() else {
                guard pending.isEmpty else { break }
                readStored()
                return .later
            }
        }
        guard !failed else { return .failed }
        guard !pending.isEmpty else { return .end }
        defer { pending.removeAll(keepingCapacity: true) }
        return .bytes(pending)
    }

    /// Appends the next patches from memory; false when they are older than memory holds. Memory missing the next
    /// version (it cannot, since the copy ends at the last version) fails the body.
    private func takeRecent() -> Bool {
        guard let first = recent.first?.version, first <= nextVersion else { return false }
        let start = nextVersion - first
        let end = min(recent.count, start + Self.pageSize, lastVersion - first + 1)
        guard start < end else {
            failed = true
            return true
        }
        for patch in recent[start..<end] { append(patch.frame.payload, version: patch.version) }
        nextVersion = recent[end - 1].version + 1
        return true
    }

    /// Reads the next page from storage; a version in neither memory nor storage (compacted while the recording
    /// streamed) fails the body.
    private func readStored() {
        reading = true
        let after = nextVersion - 1
        let through = min(lastVersion, (recent.first?.version ?? lastVersion + 1) - 1)
        readPage(after, through, Self.pageSize) { page in self.received(page, after: after) }
    }

    private func received(_ page: [StoredChange]?, after: Int) {
        reading = false
        guard let page, page.first?.version == after + 1 else {
            failed = true
            body?.resume()
            return
        }
        for change in page {
            guard change.version == nextVersion else { break }
            append(change.message, version: change.version)
            nextVersion += 1
        }
        body?.resume()
    }

    /// Adds the patch line of `version`, as the reader's view has it.
    private func append(_ line: [UInt8], version: Int) {
        lines.append(line, version: version, as: format, to: &pending)
    }
}

@available(*, unavailable)
extension RecordingStream: Sendable {}

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
    private var pending: [UInt8]
    private var nextVersion: Int
    private let lastVersion: Int
    private let readPage: PageReader
    /// The room's recent patches when the recording started; later trimming of the room's own copy does not touch it.
    private let recent: Deque<Room.LoggedPatch>
    /// The reader's view of each patch line, when the room has private parts; nil sends every line as it is.
    var view: RecordingView?
    /// A page read from storage: waiting for it, or it failed.
    private var reading = false
    private var failed = false

    /// A recording of `room` whose first line, `snapshotLine`, is the state at `version`; it ends at the room's
    /// released version now.
    init(room: Room, after version: Int, snapshotLine: [UInt8], readPage: @escaping PageReader) {
        pending = snapshotLine + [10]
        nextVersion = version + 1
        lastVersion = room.releasedVersion
        self.readPage = readPage
        recent = room.log
    }

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
        for patch in recent[start..<end] { append(patch.frame.payload) }
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
            append(change.message)
            nextVersion += 1
        }
        body?.resume()
    }

    /// Adds one patch line, as the reader's view has it.
    private func append(_ line: [UInt8]) {
        guard let view else {
            pending += line
            pending.append(10)
            return
        }
        guard let projected = view.project(line) else { return }
        pending += projected
        pending.append(10)
    }
}

@available(*, unavailable)
extension RecordingStream: Sendable {}

import DequeModule
import LockstepTransport

/// One follower of a room's changes, `GET /rooms/ROOM/log?follow=true`: its recording first, then every patch the room
/// releases (once it is as durable as an ack), one more line each, until the server drains or the client goes away.
///
/// The transport pulls the body as the socket drains. Patches released meanwhile wait in a queue of at most
/// `--queue-limit` bytes: a follower further behind is cut off (its response ends without the last chunk) and follows
/// again with `after=`. Lines are contiguous versions (as the reader's view has them, with private parts): a patch
/// that does not follow the last one queued ends the response rather than leave a gap.
///
/// Loop-bound: every method runs on the loop thread, where the room releases patches and the transport pulls bodies.
final class RoomFollower {
    /// The longest a follow stream stays silent: when nothing is queued for it, every this long it gets a keep-alive
    /// (an empty line for NDJSON, a comment for server-sent events). Timed on the server's clock.
    static let keepAliveInterval = Duration.seconds(15)

    /// Where a follower is in its life.
    enum Phase {
        /// Sending its recording, then each patch the room releases.
        case following
        /// The server drains: what is queued goes out, then the last chunk.
        case ending
        /// Done: cut off, ended, or its client went away.
        case ended
    }

    /// The room followed; it stays in memory while it has followers.
    let room: Room
    /// The response body this follower feeds; the transport owns it.
    weak var body: HTTPBodyStream?
    private(set) var phase = Phase.following
    /// The recording up to the room's released version when the follower started; nil once it is all sent.
    private var recording: RecordingStream?
    /// Each patch line as the reader gets it (private parts), shared with the recording: a view projects from the
    /// state the recording ends at.
    private let lines: any RecordingLines
    private let format: RecordingFormat
    /// Most bytes of patches queued before the follower is cut off.
    private let queueLimit: Int
    /// Patches released and not yet handed to the transport, oldest first, as the room's frames (shared bytes).
    private var queue: Deque<(version: Int, frame: OutboundFrame)> = []
    /// Bytes of the frames in `queue`.
    private(set) var queuedBytes = 0
    /// The version the next released patch must have.
    private var nextVersion: Int
    /// Bytes formatted for the transport's next pull.
    private var pending: [UInt8] = []
    /// The body answered `.later` after the recording: a released patch or keep-alive resumes it.
    private var waiting = false
    /// Called once when the follower is done: the server forgets it.
    var onEnd: ((RoomFollower) -> Void)?
    /// Sends the keep-alives; cancelled when the follower is done.
    var keepAliveTask: Task<Void, Never>?

    /// Follows `room` after `recording` (which ends at the room's released version now), each line as `format` has it
    /// and through `recording`'s view.
    init(room: Room, recording: RecordingStream, format: RecordingFormat, queueLimit: Int) {
        self.room = room
        self.recording = recording
        lines = recording.lines
        self.format = format
        self.queueLimit = queueLimit
        nextVersion = recording.lastVersion + 1
    }

    /// The next piece of the body, for the transport: the recording's, then the queued patches', then `.later` until
    /// there are more (`.end` once the server drains and all is sent).
    func next() -> HTTPBodyStream.Piece {
        guard phase != .ended else { return .failed }
        if let recording {
            let piece = recording.next()
            guard case .end = piece else { return piece }
            self.recording = nil
        }
        fill()
        if !pending.isEmpty {
            let piece = pending
            pending = []
            return .bytes(piece)
        }
        if phase == .ending { return .end }
        waiting = true
        return .later
    }

    /// Moves queued patches to `pending`, a piece at most, each projected through the reader's view.
    private func fill() {
        while pending.count < RecordingStream.pieceBytes, let (version, frame) = queue.popFirst() {
            queuedBytes -= frame.byteCount
            lines.append(frame, version: version, as: format, to: &pending)
        }
    }

    /// A patch the room released: queued for the reader, who is cut off past the queue limit.
    func release(_ patch: Room.LoggedPatch) {
        guard phase == .following, patch.version >= nextVersion else { return }
        guard patch.version == nextVersion else { return cut() }
        nextVersion += 1
        queue.append((patch.version, patch.frame))
        queuedBytes += patch.frame.byteCount
        guard queuedBytes <= queueLimit else { return cut() }
        wake()
    }

    /// A keep-alive, when nothing is queued.
    func keepAlive() {
        guard phase == .following, recording == nil, queue.isEmpty, pending.isEmpty else { return }
        pending = format.keepAlive
        wake()
    }

    /// The server drains: what is queued goes out, then the last chunk. A body the transport never took just ends.
    func finish() {
        guard phase == .following else { return }
        phase = .ending
        guard body != nil else { return end() }
        wake()
    }

    /// Ends the response at once, without the last chunk: the reader fell too far behind, or the room was dropped.
    func cut() {
        guard phase != .ended else { return }
        body?.close()
        end()
    }

    /// The transport let go of the body: it ended, failed, or its client went away.
    func released() {
        end()
    }

    private func wake() {
        guard waiting else { return }
        waiting = false
        body?.resume()
    }

    private func end() {
        guard phase != .ended else { return }
        phase = .ended
        queue.removeAll()
        queuedBytes = 0
        pending = []
        recording = nil
        keepAliveTask?.cancel()
        keepAliveTask = nil
        let onEnd = self.onEnd
        self.onEnd = nil
        onEnd?(self)
    }
}

@available(*, unavailable)
extension RoomFollower: Sendable {}

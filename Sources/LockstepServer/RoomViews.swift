import DequeModule
import LockstepCore
import LockstepJSON
import LockstepTransport

/// The views of one room that clients follow (`?path=`, or the whole room under private parts), one per stream
/// (``RoomView/streamKey(parts:)``), and how each change looks from each: the streams it reaches, the frame each
/// stream carries, the forms that readers who see it otherwise get instead, and what a client resuming a view missed.
///
/// The deciding half of a room's fan-out, with no connection or stream in it: ``Room`` carries out what it decides
/// through each view's ``ViewStream``, and the cluster simulation runs it for its clients of views.
struct RoomViews {
    /// One change as a view's clients see it: the stream's frame (nil: the stream's reader does not see it), and the
    /// readers who see it otherwise, each with its own frame (nil: nothing).
    struct Frames {
        var shared: OutboundFrame?
        var own: [String: OutboundFrame?] = [:]

        /// What `reader`'s clients get; nil when nothing.
        func frame(for reader: String?) -> OutboundFrame? {
            if let reader, let own = own[reader] { return own }
            return shared
        }
    }

    /// One view's stream, as far as deciding what its clients get goes.
    struct Stream {
        /// The view's value as the stream's own reader has it.
        var value: ViewValue
        /// The room's version when the stream was opened: it has every patch that touched the view after that.
        let startVersion: Int
        /// The view's patches after ``startVersion``, newest last, at most the room's resume window.
        var log: Deque<(version: Int, frames: Frames)> = []
        /// Readers other than the stream's own with clients on it: how many, and the room's version from which the
        /// stream holds their own frames.
        var readers: [String: (since: Int, clients: Int)] = [:]
        /// Clients following the stream, of every reader.
        var clients = 0

        /// Whether `reader` has a client on the stream.
        func hasClients(of reader: String) -> Bool {
            reader == value.view.reader ? clients > 0 : readers[reader] != nil
        }
    }

    /// The parts of the room only their owners see.
    var parts: PrivateParts
    /// How many patches each stream keeps for resuming clients.
    let resumeWindow: Int
    /// The open streams, by key; a stream goes when its last client leaves. Changed through their index
    /// (`streams.values[i]`), in place, so a stream's value and log are never copied for a change.
    private(set) var streams: [RoomView: Stream] = [:]
    /// The streams each reader has clients on: a change wholly inside private subtrees is offered to its owners'
    /// streams alone.
    private var byReader: [String: Set<RoomView>] = [:]

    init(parts: PrivateParts = .none, resumeWindow: Int) {
        self.parts = parts
        self.resumeWindow = resumeWindow
    }

    var isEmpty: Bool { streams.isEmpty }

    /// The stream `view`'s clients follow.
    func key(of view: RoomView) -> RoomView {
        view.streamKey(parts: parts)
    }

    /// Opens the stream `view`'s clients follow, if none is open, at the room's `version` and `state`.
    mutating func open(_ view: RoomView, version: Int, state: () -> JSON) {
        let key = key(of: view)
        guard streams[key] == nil else { return }
        streams[key] = Stream(value: ViewValue(view: key, state: state(), parts: parts), startVersion: version)
    }

    /// Adds a client of `view` to its open stream; its reader gets its own frames for changes after the room's
    /// `version` (stored or not).
    mutating func admit(_ view: RoomView, version: Int) {
        let key = key(of: view)
        guard streams[key] != nil else { return }
        streams[key]!.clients += 1
        guard let reader = view.reader else { return }
        byReader[reader, default: []].insert(key)
        if reader != key.reader { streams[key]!.readers[reader, default: (version, 0)].clients += 1 }
    }

    /// Takes a client of `view` off its stream; true when that was the stream's last client, and the stream closed.
    mutating func dismiss(_ view: RoomView) -> Bool {
        let key = key(of: view)
        guard var stream = streams[key] else { return false }
        stream.clients -= 1
        if let reader = view.reader {
            if var entry = stream.readers[reader] {
                entry.clients -= 1
                stream.readers[reader] = entry.clients == 0 ? nil : entry
            }
            if !stream.hasClients(of: reader) { byReader[reader]?.remove(key) }
        }
        streams[key] = stream.clients == 0 ? nil : stream
        return stream.clients == 0
    }

    /// How a change of `ops` looks from each open stream: the patch message its clients get, with `cause`, and the
    /// forms of it that readers who see it otherwise get instead; streams it leaves as they were get nothing.
    /// `frame` is the change's message for the whole room, shared by the views that see all of it. `state` is the
    /// room's state after the change.
    mutating func project(
        _ ops: JSONPatch, version: Int, cause: Cause, undo: Int, redo: Int, touched: PrivateParts.Touched,
        frame: OutboundFrame, after state: () throws -> JSON
    ) -> [RoomView: Frames] {
        guard !streams.isEmpty else { return [:] }
        var cached: JSON?
        let read = { () throws -> JSON in
            if let cached { return cached }
            let value = try state()
            cached = value
            return value
        }
        let encode = { (projected: JSONPatch, reader: String?, redacts: Bool) -> OutboundFrame in
            var seen = cause
            if redacts, !touched.isVisible(to: reader) { seen.action = nil }
            #if LOCKSTEP_MUTANTS
            if Mutant.isActive(.hiddenActionShown) { seen.action = cause.action }
            #endif
            if projected == ops, seen == cause { return frame }
            let message = ServerMessage.patch(version: version, ops: projected, cause: seen, undo: undo, redo: redo)
            return OutboundFrame(text: message.serialized())
        }
        // A change wholly inside private subtrees changes nothing others see: only its owners' streams are offered
        // it, so it costs the same however many clients the room has.
        let offered =
            parts.isWhollyPrivate(ops)
            ? Set(touched.owners.flatMap { byReader[$0] ?? [] }).compactMap { streams.index(forKey: $0) }
            : Array(streams.indices)
        let carries = Self.carries(ops)
        var frames: [RoomView: Frames] = [:]
        for index in offered {
            let key = streams.keys[index]
            let shared = streams.values[index].value.accept(ops, parts: parts, after: read)
            var projection = Frames(shared: shared.map { encode($0, key.reader, key.redacts) })
            if key.redacts {
                let readers = streams.values[index].readers
                for reader in carries ? Array(readers.keys) : touched.owners.filter({ readers[$0] != nil }) {
                    let view = RoomView(path: key.path, reader: reader, redacts: true)
                    let own = (try? view.project(ops, parts: parts, after: read))??.operations
                    projection.own[reader] = .some(own.map { encode($0, reader, true) })
                }
            }
            if projection.shared != nil || !projection.own.isEmpty { frames[key] = projection }
        }
        return frames
    }

    /// Whether `ops` move or copy: what they carry may be one reader's to see and not another's, so each reader gets
    /// its own form.
    private static func carries(_ ops: JSONPatch) -> Bool {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.carriedValueShared) { return false }
        #endif
        return ops.operations.contains {
            switch $0 {
            case .move, .copy: true
            default: false
            }
        }
    }

    /// Keeps a released change's frames, for clients resuming the views it touched.
    mutating func release(_ frames: [RoomView: Frames], version: Int) {
        for (key, projection) in frames {
            guard let index = streams.index(forKey: key) else { continue }
            streams.values[index].log.append((version, projection))
            if streams.values[index].log.count > resumeWindow { streams.values[index].log.removeFirst() }
        }
    }

    /// Whether `view`'s stream brings its reader their own frame of every change after `version`, the room being at
    /// `current`: a change applied before the stream opened, or before the reader had a client on it, was projected
    /// without them, and one not yet released then reaches a client joining now only through its stream.
    func carries(_ view: RoomView, after version: Int, current: Int) -> Bool {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.resumeAcrossUnreleased) { return true }
        #endif
        guard version < current else { return true }
        let key = key(of: view)
        guard let stream = streams[key], stream.startVersion <= version else { return false }
        guard let reader = view.reader, reader != key.reader else { return true }
        return (stream.readers[reader]?.since ?? .max) <= version
    }

    /// The patches after `version` up to `released` as a client of `view` sees them, if its stream still has all of
    /// them.
    func patches(after version: Int, released: Int, seenThrough view: RoomView) -> [OutboundFrame]? {
        let key = key(of: view)
        guard let stream = streams[key], version >= 0, version <= released else { return nil }
        if let reader = view.reader, reader != key.reader, (stream.readers[reader]?.since ?? .max) > version {
            return nil
        }
        let full = stream.log.count == resumeWindow
        let oldest = full ? (stream.log.first?.version ?? stream.startVersion) - 1 : stream.startVersion
        guard version >= oldest else { return nil }
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.resumeWithSharedFrames) {
            return stream.log.filter { $0.version > version }.compactMap(\.frames.shared)
        }
        #endif
        return stream.log.filter { $0.version > version }.compactMap { $0.frames.frame(for: view.reader) }
    }

    /// The room's state went back (a write taken back): each view's value is read again.
    mutating func reset(to state: JSON) {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.viewsNotReset) { return }
        #endif
        for index in streams.indices { streams.values[index].value.reset(to: state, parts: parts) }
    }
}

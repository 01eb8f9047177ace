public import LockstepJSON

/// A room's history as `GET /rooms/ROOM/log` returns it: the state at one version, then every patch after it.
///
/// Applying the patches in order to ``state`` gives the room's state at each later version; their causes say what
/// to send (actions, undos, redos, reverts) to make a room, or a reducer, go through the same history again.
public struct Recording: Sendable, Equatable {
    /// One patch line, as clients received it.
    public struct Step: Sendable, Equatable {
        /// The room's version after this step (the patch's `version`).
        public var version: Int
        /// The patch's `ops`: they take the state of `version - 1` to the state of `version`.
        public var ops: JSONPatch
        /// The patch's `cause`: what made the change, who and when.
        public var cause: Cause
        /// The patch's `undo`: how many steps global undo could take back after it.
        public var undo: Int
        /// The patch's `redo`: how many steps global redo could re-apply after it.
        public var redo: Int

        /// A step as its `patch` line carries it.
        public init(version: Int, ops: JSONPatch, cause: Cause, undo: Int, redo: Int) {
            self.version = version
            self.ops = ops
            self.cause = cause
            self.undo = undo
            self.redo = redo
        }

        /// What the reducer saw when this step was applied in the room of `epoch`: its sender, time and random
        /// source, as the cause recorded them. (A sender's session is not recorded, so its author is its client.)
        public func context(epoch: String) -> ReducerContext {
            ReducerContext(
                sender: cause.client.map { Sender(client: $0, name: cause.name, subject: cause.sub) },
                time: cause.at ?? 0, version: version, epoch: epoch)
        }
    }

    /// The room's name, from the first line's `room`.
    public var room: String
    /// The version of the first line's state.
    public var version: Int
    /// The room's state at ``version``.
    public var state: JSON
    /// The changes after ``version``, oldest first, with no gap.
    public var steps: [Step]
    /// The room's epoch: with each step's version, it seeds the reducer's random source.
    public var epoch: String
    /// The app's state version (``StateEvolution``) the states and patches are written in; 1 when the first line
    /// does not say.
    public var stateVersion: Int

    /// A recording of `room` from the state at `version`, followed by `steps`.
    public init(room: String, version: Int, state: JSON, steps: [Step], epoch: String = "", stateVersion: Int = 1) {
        self.room = room
        self.version = version
        self.state = state
        self.steps = steps
        self.epoch = epoch
        self.stateVersion = stateVersion
    }

    /// Reads NDJSON: a `snapshot` line, then one `patch` line per version; blank lines are skipped.
    public init(ndjson bytes: [UInt8]) throws(RecordingError) {
        var lines = bytes.split(separator: UInt8(ascii: "\n")).enumerated().lazy
            .filter { !$0.element.allSatisfy { $0 == 32 || $0 == 9 || $0 == 13 } }
            .makeIterator()
        guard let (_, first) = lines.next() else { throw .empty }
        guard case .object(let snapshot) = try Self.parse(Array(first), line: 1),
            snapshot["type"]?.stringValue == "snapshot", let version = snapshot["version"]?.intValue
        else {
            throw .notASnapshot
        }
        self.init(
            room: snapshot["room"]?.stringValue ?? "", version: version, state: snapshot["state"] ?? .null, steps: [],
            epoch: snapshot["epoch"]?.stringValue ?? "", stateVersion: snapshot["stateVersion"]?.intValue ?? 1)
        while let (index, line) = lines.next() {
            let json = try Self.parse(Array(line), line: index + 1)
            let message: ServerMessage
            do {
                message = try ServerMessage(json: json)
            } catch {
                throw .badLine(index + 1, error.message)
            }
            guard case .patch(let stepVersion, let ops, let cause, let undo, let redo) = message else {
                throw .badLine(index + 1, "not a patch")
            }
            let expected = (steps.last?.version ?? version) + 1
            guard stepVersion == expected else { throw .gap(expected: expected, found: stepVersion) }
            steps.append(Step(version: stepVersion, ops: ops, cause: cause, undo: undo, redo: redo))
        }
    }

    private static func parse(_ line: [UInt8], line number: Int) throws(RecordingError) -> JSON {
        do {
            return try JSON(parsing: line)
        } catch {
            throw .badLine(number, "\(error)")
        }
    }
}

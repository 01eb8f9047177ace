public import LockstepCore
import LockstepJSON
import CustomDump
import Testing

/// Replays a room's recording (`GET /rooms/ROOM/log`) through a reducer, in a test: does this reducer still do what
/// production did?
///
/// ```swift
/// let recording = try Recording(ndjson: Array(try Data(contentsOf: url)))
/// RecordingReplay(Todos()).check(recording)   // fails at the first version whose state differs, with a diff
/// ```
///
/// Every recorded action, undo, redo and revert is applied in order to a store that starts at the recording's first
/// state, and after each the state must equal the recorded one. Steps caused by effects are applied as the actions
/// they recorded (the replay starts no effect of its own), so record from version 0 (`?after=0`) when the recording
/// undoes changes made before its first line.
public struct RecordingReplay<R: Reducer> {
    /// Where a replay first parted from its recording.
    public struct Difference: Sendable, Equatable, CustomStringConvertible {
        /// The first version whose state (or existence) differs.
        public let version: Int
        /// What differs, with a diff of the recorded (−) and replayed (+) state when both exist.
        public let message: String

        public var description: String { "version \(version): \(message)" }
    }

    /// The reducer under test, which replays every recorded action.
    public let reducer: R
    /// The undo depth of the replay's store; give the server's (`--undo-depth`) so undo takes back the same changes.
    public let undoDepth: Int
    /// The reducer's state version and migrations, as its ``/LockstepCore/App`` declares them: a recording made
    /// under an older state version is migrated (``/LockstepCore/Recording/migrated(by:)``) before it is replayed.
    public let evolution: StateEvolution

    /// A replay through `reducer`, with the server's undo depth.
    public init(_ reducer: R, undoDepth: Int = 1000, stateVersion: Int = 1, migrations: [Migration] = []) {
        self.reducer = reducer
        self.undoDepth = undoDepth
        evolution = StateEvolution(version: stateVersion, migrations: migrations)
    }

    /// Replays `recording`, recording one test failure at the first version that differs; returns that difference.
    @discardableResult
    public func check(
        _ recording: Recording,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) -> Difference? {
        guard let difference = firstDifference(in: recording) else { return nil }
        Issue.record(
            Comment(rawValue: difference.description),
            sourceLocation: SourceLocation(
                fileID: "\(fileID)", filePath: "\(filePath)", line: Int(line), column: Int(column)
            )
        )
        return difference
    }

    /// The first version at which replaying `recording` through the reducer does not give the recorded state.
    public func firstDifference(in original: Recording) -> Difference? {
        let recording: Recording
        do {
            recording = try original.migrated(by: evolution)
        } catch {
            return Difference(version: original.version, message: "the recording cannot be migrated: \(error)")
        }
        let initial: R.State
        do {
            initial = try recording.state.decode(R.State.self)
        } catch {
            return Difference(
                version: recording.version,
                message: "the recording's first state is not a state of this reducer: \(error)")
        }
        var store = Store(
            reducer: reducer, state: initial, version: recording.version, history: History(depth: undoDepth))
        var recorded = recording.state
        // Reverts go back to recorded states; only those some revert names are kept.
        let targets = Set(recording.steps.compactMap { $0.cause.kind == .revert ? $0.cause.to : nil })
        var kept: [Int: JSON] = targets.contains(recording.version) ? [recording.version: recorded] : [:]

        for step in recording.steps {
            let version = step.version
            do {
                try step.ops.apply(to: &recorded)
            } catch {
                return Difference(version: version, message: "the recording's own patch does not apply: \(error)")
            }
            let context = step.context(epoch: recording.epoch)
            if let failure = apply(step, to: &store, kept: kept, recorded: recorded, context: context) {
                return Difference(version: version, message: failure)
            }
            guard store.version == version else {
                return Difference(
                    version: version,
                    message:
                        "the recording changed the state here, the reducer did not\(stateDiff(recorded, store.state))")
            }
            guard let replayed = try? store.stateJSON(), replayed == recorded else {
                return Difference(version: version, message: "the state differs\(stateDiff(recorded, store.state))")
            }
            if targets.contains(version) { kept[version] = recorded }
        }
        return nil
    }

    /// Applies one recorded step with the context it was applied with; returns why it failed, if it did.
    ///
    /// An undo mine or redo mine goes to its recorded state: whose change it took back depends on sessions, which a
    /// recording does not name.
    private func apply(
        _ step: Recording.Step, to store: inout Store<R>, kept: [Int: JSON], recorded: JSON, context: ReducerContext
    ) -> String? {
        let cause = step.cause
        do {
            if cause.mine {
                _ = try store.revert(to: step.version, state: recorded, context: context)
                return nil
            }
            switch cause.kind {
            case .action, .effect, .timer, .join, .leave:
                guard let json = cause.action else { return "the recorded \(cause.kind) has no action" }
                let action: R.Action
                do {
                    action = try json.decode(R.Action.self)
                } catch {
                    return "\(json) is not an action of this reducer: \(error)"
                }
                _ = try store.send(action, context: context)
            case .undo:
                _ = try store.undo(context: context)
            case .redo:
                _ = try store.redo(context: context)
            case .revert:
                guard let target = cause.to, let state = kept[target] else {
                    return "the revert goes back to version \(cause.to.map(String.init) ?? "?"), before the recording"
                }
                _ = try store.revert(to: target, state: state, context: context)
            }
        } catch {
            let hint = error == .nothingToUndo || error == .nothingToRedo ? " (record from version 0: ?after=0)" : ""
            return "the recorded \(cause.kind) fails here: \(error)\(hint)"
        }
        return nil
    }

    /// A readable diff of the recorded (−) and replayed (+) state, as typed values when the recorded one decodes.
    private func stateDiff(_ recorded: JSON, _ replayed: R.State) -> String {
        guard let expected = try? recorded.decode(R.State.self) else {
            return "; recorded \(recorded), replayed \((try? JSON(encoding: replayed)).map { "\($0)" } ?? "?")"
        }
        return diff(expected, replayed).map { ":\n\($0)\n(− recorded, + replayed)" } ?? ""
    }
}

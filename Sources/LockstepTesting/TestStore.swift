public import LockstepCore
import LockstepJSON
import CustomDump
import Testing

/// An exhaustive test harness for a reducer: every action states exactly how the state changes.
///
/// ```swift
/// let store = TestStore(Counter())
/// store.send(.increment) { $0.count = 1 }
/// store.undo { $0.count = 0 }
/// store.send(.add(amount: .max)) { _ in }     // fails the test: the action was rejected
/// store.reject(.add(amount: .max))            // passes
/// ```
///
/// A change the closure did not describe, or a described change that did not happen, fails the
/// test with a readable diff of expected and actual state. Actions sent by `.send` effects wait
/// in a queue until `receive` states them.
///
/// Timers work as on a server, on the store's clock: an action a `.schedule` effect scheduled joins that queue
/// once ``advance(by:)`` moves ``now`` past its due time (timers due together in the order they were scheduled), as
/// the scheduling step's sender; `.cancel`, or scheduling the same name again, takes a pending one away. See
/// ``pendingTimers``.
///
/// ```swift
/// store.send(.move) { $0.moves = 1 }          // schedules .timeout after 30 s as timer "turn"
/// store.advance(by: .seconds(30))
/// store.receive(.timeout) { $0.timeouts = 1 }
/// ```
///
/// Each step runs in the context the server would give it: the version it would get, a time from the store's own
/// clock (``now``, which moves on by ``timeStep`` after every step and by ``advance(by:)``), and the random source the
/// server seeds from the room's epoch and that version. A context passed to a step gives its sender, and its time
/// when it has one.
@MainActor
public final class TestStore<R: Reducer> where R.Action: Equatable {
    /// The store under test, through the same code paths the server uses.
    public private(set) var store: Store<R>
    /// Actions effects sent, and timers that fired, each with the context the server would apply it in.
    private var queued: [(action: R.Action, context: ReducerContext)] = []
    /// Timers `.schedule` effects set that have not fired or been cancelled.
    var timers: [PendingTimer] = []
    /// Numbers timers in the order they were scheduled, and names those scheduled without one.
    var timerCount = 0
    /// The time of the next step, in milliseconds since the Unix epoch.
    public private(set) var now: Int
    /// How far ``now`` moves on after each step.
    public var timeStep: Duration
    /// The room's epoch, which seeds each step's random source with its version.
    public let epoch: String

    /// A harness for `reducer`, starting from `state` (the reducer's initial state by default) at version 0, its
    /// first step at `now` (2026-01-01 by default), each next one `timeStep` later.
    public init(
        _ reducer: R, state: R.State? = nil, undoDepth: Int = 1000, epoch: String = "test",
        now: Int = 1_767_225_600_000, timeStep: Duration = .seconds(1)
    ) {
        store = Store(reducer: reducer, state: state, history: History(depth: undoDepth))
        self.epoch = epoch
        self.now = now
        self.timeStep = timeStep
    }

    /// Lets `duration` pass before the next step, as between two requests on a server: timers due by then fire,
    /// their actions waiting for ``receive(_:_:fileID:filePath:line:column:)`` in the order the server applies them.
    /// The ``timeStep`` each step moved the clock on counts as time that passed.
    public func advance(by duration: Duration) {
        now += Int(duration / .milliseconds(1))
        fireTimers()
    }

    /// `context` as the server completes it for the next step: its version, its time (the context's own, else
    /// ``now``, never below the previous change's) and the random source of that version. The clock moves on.
    private func serverContext(_ context: ReducerContext) -> ReducerContext {
        var completed = context
        completed.version = store.version + 1
        completed.time = max(context.time == 0 ? now : context.time, store.history.authors.latestTime)
        completed.random = SeededRandom(epoch: epoch, version: completed.version)
        now = max(now, completed.time) + Int(timeStep / .milliseconds(1))
        return completed
    }

    /// The store's current state, after every action sent so far.
    public var state: R.State { store.state }
    /// The store's current version: one more for each action, undo or redo that changed the state.
    public var version: Int { store.version }

    /// Sends `action`, expecting it to change the state exactly as `update` does to the old one.
    ///
    /// Pass an `update` that changes nothing to state that the action is a no-op, and a `context` to send it as
    /// someone, at some time (what a ``/LockstepCore/ContextualReducer`` reads, and whose change undo mine takes back).
    @discardableResult
    public func send(
        _ action: R.Action,
        context: ReducerContext = ReducerContext(),
        _ update: (inout R.State) throws -> Void,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) rethrows -> Change? {
        let before = store.state
        var expected = before
        try update(&expected)
        do {
            let completed = serverContext(context)
            let result = try store.send(action, context: completed)
            queueEffects(of: result.effect, in: completed)
            if let change = result.change {
                expectPatches(of: change, from: before, fileID: fileID, filePath: filePath, line: line, column: column)
            }
            expectEqual(
                store.state, expected, "state after \(action)",
                fileID: fileID, filePath: filePath, line: line, column: column
            )
            return result.change
        } catch {
            fail(
                "\(action) failed: \(error)", fileID: fileID, filePath: filePath, line: line, column: column
            )
            return nil
        }
    }

    /// Sends `action`, expecting the app to refuse it, with `message` if given, and nothing to change.
    public func reject(
        _ action: R.Action, context: ReducerContext = ReducerContext(), message: String? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) {
        let before = store.state
        do {
            let result = try store.send(action, context: serverContext(context))
            fail(
                "expected \(action) to be rejected, but it \(result.change == nil ? "changed nothing" : "was applied")",
                fileID: fileID, filePath: filePath, line: line, column: column
            )
        } catch .rejected(let reason) {
            if let message, message != reason {
                fail(
                    "rejected with \"\(reason)\", expected \"\(message)\"",
                    fileID: fileID, filePath: filePath, line: line, column: column
                )
            }
        } catch {
            fail(
                "expected a rejection, got \(error)", fileID: fileID, filePath: filePath, line: line, column: column
            )
        }
        expectEqual(
            store.state, before, "a rejected action changed the state",
            fileID: fileID, filePath: filePath, line: line, column: column
        )
    }

    /// Applies the next action a `.send` effect produced, expecting `action` and the change `update` describes.
    public func receive(
        _ action: R.Action,
        _ update: (inout R.State) throws -> Void,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) rethrows {
        guard !queued.isEmpty else {
            fail(
                "expected to receive \(action), but no effect sent an action and no timer fired",
                fileID: fileID, filePath: filePath, line: line, column: column
            )
            return
        }
        let next = queued.removeFirst()
        expectEqual(
            next.action, action, "received action", fileID: fileID, filePath: filePath, line: line, column: column
        )
        try send(
            next.action, context: next.context, update, fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Undoes the latest change, expecting the state `update` describes.
    public func undo(
        _ update: (inout R.State) throws -> Void,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) rethrows {
        try step(
            { (store: inout Store<R>, context) throws(StoreError) in try store.undo(context: context) }, update,
            fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Redoes the latest undone change, expecting the state `update` describes.
    public func redo(
        _ update: (inout R.State) throws -> Void,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) rethrows {
        try step(
            { (store: inout Store<R>, context) throws(StoreError) in try store.redo(context: context) }, update,
            fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Takes back the newest change of `context`'s sender still in effect (undo mine), expecting the state `update`
    /// describes.
    public func undoMine(
        as context: ReducerContext,
        _ update: (inout R.State) throws -> Void,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) rethrows {
        try step(
            { (store: inout Store<R>, context) throws(StoreError) in try store.undoMine(context: context) },
            context: context, update,
            fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Re-applies what `context`'s sender's newest undo mine took back (redo mine), expecting the state `update`
    /// describes.
    public func redoMine(
        as context: ReducerContext,
        _ update: (inout R.State) throws -> Void,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) rethrows {
        try step(
            { (store: inout Store<R>, context) throws(StoreError) in try store.redoMine(context: context) },
            context: context, update,
            fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Actions effects sent, or timers fired, that no `receive` has stated yet; a finished test expects none.
    public var unreceivedActions: [R.Action] { queued.map(\.action) }

    /// Fails the test if effects sent actions (or timers fired them) that no `receive` stated. Timers still pending
    /// are no failure: a server fires them later (see ``pendingTimers``).
    public func finish(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) {
        guard !queued.isEmpty else { return }
        fail(
            "effects sent actions that were never received: \(unreceivedActions)",
            fileID: fileID, filePath: filePath, line: line, column: column
        )
    }

    private func step(
        _ change: (inout Store<R>, ReducerContext) throws(StoreError) -> Change,
        context: ReducerContext = ReducerContext(),
        _ update: (inout R.State) throws -> Void,
        fileID: StaticString, filePath: StaticString, line: UInt, column: UInt
    ) rethrows {
        var expected = store.state
        try update(&expected)
        do throws(StoreError) {
            let context = serverContext(context)
            _ = try change(&store, context)
        } catch {
            fail("\(error)", fileID: fileID, filePath: filePath, line: line, column: column)
        }
        expectEqual(
            store.state, expected, fileID: fileID, filePath: filePath, line: line, column: column
        )
    }

    /// Queues what `.send` effects sent, and sets and cancels the timers of `.schedule` and `.cancel`, as the step
    /// run in `context` makes the server do.
    private func queueEffects(of effect: Effect<R.Action>, in context: ReducerContext) {
        for operation in effect.operations {
            switch operation {
            case .send(let action):
                queued.append((action, ReducerContext()))
            case .schedule(let action, let delay, let name):
                schedule(action, after: delay, timer: name, by: context)
            case .cancel(let name):
                timers.removeAll { $0.name == name }
            case .run:
                continue
            }
        }
    }

    /// Moves the timers due by ``now`` to the queue, soonest first, each in its scheduler's name at its due time.
    private func fireTimers() {
        let due = timers.filter { $0.due <= now }.sorted { ($0.due, $0.order) < ($1.due, $1.order) }
        timers.removeAll { $0.due <= now }
        for timer in due {
            queued.append((timer.action, ReducerContext(sender: timer.sender, time: timer.due)))
        }
    }

    /// Fails unless the change's patches turn the old state's JSON into the new one and back, as clients and
    /// undo rely on; a ``/LockstepCore/PatchingReducer`` writes its patches itself.
    private func expectPatches(
        of change: Change, from before: R.State,
        fileID: StaticString, filePath: StaticString, line: UInt, column: UInt
    ) {
        do {
            let old = try JSON(encoding: before)
            let new = try JSON(encoding: store.state)
            if try change.patch.applied(to: old) != new {
                fail("the patch \(change.patch) does not turn \(old) into \(new)",
                    fileID: fileID, filePath: filePath, line: line, column: column)
            }
            if try change.inverse.applied(to: new) != old {
                fail("the inverse \(change.inverse) does not turn \(new) back into \(old)",
                    fileID: fileID, filePath: filePath, line: line, column: column)
            }
        } catch {
            fail("the patches of version \(change.version) do not apply: \(error)",
                fileID: fileID, filePath: filePath, line: line, column: column)
        }
    }

    /// Fails the running test with a readable diff when `actual` is not `expected`.
    private func expectEqual<T: Equatable>(
        _ actual: T, _ expected: T, _ what: @autoclosure () -> String = "state",
        fileID: StaticString, filePath: StaticString, line: UInt, column: UInt
    ) {
        guard actual != expected else { return }
        let difference = diff(expected, actual).map { "\n\($0)\n(− expected, + actual)" } ?? ": \(actual) ≠ \(expected)"
        fail("\(what()) differs\(difference)", fileID: fileID, filePath: filePath, line: line, column: column)
    }

    private func fail(
        _ message: String, fileID: StaticString, filePath: StaticString, line: UInt, column: UInt
    ) {
        Issue.record(
            Comment(rawValue: message),
            sourceLocation: SourceLocation(
                fileID: "\(fileID)", filePath: "\(filePath)", line: Int(line), column: Int(column)
            )
        )
    }
}

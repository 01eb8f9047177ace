/// Follow-up work a reducer asks for: actions fed back into the same room, now or later.
///
/// Effects keep reducers pure. `.send` applies an action right after the one that produced it;
/// `.schedule` has the server apply one later, as a durable timer of the room that fires once across restarts and
/// servers (`cause.kind` = `timer`); `.run` starts asynchronous work (a request to another service) that may send
/// actions when it likes. Actions from `.send` and `.run` reach clients with `cause.kind` = `effect`.
public struct Effect<Action: Sendable>: Sendable {
    /// One unit of follow-up work.
    public enum Operation: Sendable {
        /// Apply this action next, in the same turn.
        case send(Action)
        /// Run this work off the room's thread; it feeds actions back through `send`.
        case run(@Sendable (_ send: Send<Action>) async -> Void)
        /// Apply this action after `after`, as the room's timer `timer` (a name again replaces it; nil: the server
        /// picks one).
        case schedule(Action, after: Duration, timer: String?)
        /// Cancel the room's timer of this name.
        case cancel(timer: String)
    }

    /// The work to do, in order.
    public let operations: [Operation]

    init(operations: [Operation]) {
        self.operations = operations
    }

    /// No follow-up work: the common case.
    public static var none: Self { Self(operations: []) }

    /// Applies `action` immediately after the current one.
    public static func send(_ action: Action) -> Self {
        Self(operations: [.send(action)])
    }

    /// Has the server apply `action` after `delay`, as the room's timer `timer`, with the sender of the action that
    /// scheduled it: stored with the room, it fires once even across restarts, with nobody connected. Replaces a
    /// pending timer of the same name. For delays, rather than sleeping in ``run(_:)``.
    public static func schedule(_ action: Action, after delay: Duration, timer: String? = nil) -> Self {
        Self(operations: [.schedule(action, after: delay, timer: timer)])
    }

    /// Cancels the room's pending timer `timer`, if there is one.
    public static func cancel(timer: String) -> Self {
        Self(operations: [.cancel(timer: timer)])
    }

    /// Runs `body` asynchronously; every action it sends is applied to the room in arrival order.
    public static func run(_ body: @escaping @Sendable (_ send: Send<Action>) async -> Void) -> Self {
        Self(operations: [.run(body)])
    }

    /// Combines effects, keeping their order.
    public static func merge(_ effects: Self...) -> Self {
        Self(operations: effects.flatMap(\.operations))
    }

    /// Converts the actions of this effect, so a parent reducer can embed a child's effects.
    public func map<Other: Sendable>(_ transform: @escaping @Sendable (Action) -> Other) -> Effect<Other> {
        Effect<Other>(operations: operations.map { operation in
            switch operation {
            case .send(let action):
                return .send(transform(action))
            case .run(let body):
                return .run { send in await body(Send { await send(transform($0)) }) }
            case .schedule(let action, let delay, let timer):
                return .schedule(transform(action), after: delay, timer: timer)
            case .cancel(let timer):
                return .cancel(timer: timer)
            }
        })
    }
}

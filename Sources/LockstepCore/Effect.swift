/// Follow-up work a reducer asks for: actions fed back into the same room, now or later.
///
/// Effects keep reducers pure. `.send` applies an action right after the one that produced it;
/// `.run` starts asynchronous work (a timer, a request) that may send actions when it likes.
/// Actions from effects reach clients with `cause.kind` = `effect`.
public struct Effect<Action: Sendable>: Sendable {
    /// One unit of follow-up work.
    public enum Operation: Sendable {
        /// Apply this action next, in the same turn.
        case send(Action)
        /// Run this work off the room's thread; it feeds actions back through `send`.
        case run(@Sendable (_ send: Send<Action>) async -> Void)
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
            }
        })
    }
}

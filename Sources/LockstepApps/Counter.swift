public import LockstepCore
import LockstepJSON

/// The `counter` app: one shared number.
///
/// The smallest complete reducer; copy it to start your own. It says itself what each action
/// changed (a ``/LockstepCore/PatchingReducer``), so the store neither compares nor diffs its state; a plain
/// ``/LockstepCore/Reducer`` writes `reduce(into:action:)` instead and leaves that to the store.
public struct Counter: PatchingReducer {
    public struct State: Codable, Equatable, Sendable {
        /// The shared number, `count` in the room's JSON state.
        public var count: Int

        /// A counter at `count`; a new room starts at 0.
        public init(count: Int = 0) {
            self.count = count
        }
    }

    public enum Action: Codable, Equatable, Sendable {
        /// Adds 1 to the count; `{"type":"increment"}`.
        case increment
        /// Subtracts 1 from the count; `{"type":"decrement"}`.
        case decrement
        /// Adds `amount` (which may be negative) to the count; `{"type":"add","amount":N}`, rejected on overflow.
        case add(amount: Int)
        /// Sets the count back to 0; `{"type":"reset"}`.
        case reset
    }

    /// The counter app, as `--app counter` runs it.
    public init() {}

    public var initialState: State { State() }

    public func patch(_ state: inout State, with action: Action) throws(Rejection) -> Reduction<Action> {
        let old = state.count
        switch action {
        case .increment: try state.add(1)
        case .decrement: try state.add(-1)
        case .add(let amount): try state.add(amount)
        case .reset: state.count = 0
        }
        guard state.count != old else { return Reduction(forward: JSONPatch(), inverse: JSONPatch()) }
        return Reduction(
            forward: JSONPatch([.replace(path: State.countPath, value: .int(state.count))]),
            inverse: JSONPatch([.replace(path: State.countPath, value: .int(old))]))
    }
}

extension Counter.State {
    fileprivate static let countPath = JSONPointer(tokens: ["count"])

    fileprivate mutating func add(_ amount: Int) throws(Rejection) {
        let (sum, overflow) = count.addingReportingOverflow(amount)
        guard !overflow else { throw Rejection("the count would overflow") }
        count = sum
    }
}

extension Counter.Action {
    private enum CodingKeys: String, CodingKey {
        case type, amount
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "increment": self = .increment
        case "decrement": self = .decrement
        case "add": self = .add(amount: try container.decode(Int.self, forKey: .amount))
        case "reset": self = .reset
        default: throw ActionType.unknown(type, container: container, codingKey: .type)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .increment: try container.encode("increment", forKey: .type)
        case .decrement: try container.encode("decrement", forKey: .type)
        case .add(let amount):
            try container.encode("add", forKey: .type)
            try container.encode(amount, forKey: .amount)
        case .reset: try container.encode("reset", forKey: .type)
        }
    }
}

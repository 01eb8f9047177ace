// The reducer of the main README's "Write your own reducer", in the executable of its "Build your own server".
import LockstepCore

struct Poll: Reducer {
    struct State: Codable, Equatable, Sendable {
        var question = "Lunch?"
        var votes: [String: Int] = [:]
    }

    enum Action: Codable, Equatable, Sendable {
        case vote(option: String)
        case close
    }

    var initialState: State { State() }

    func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
        switch action {
        case .vote(let option):
            guard option.count <= 40 else { throw Rejection("an option has at most 40 characters") }
            state.votes[option, default: 0] += 1
        case .close:
            state.votes = [:]
        }
        return .none
    }
}

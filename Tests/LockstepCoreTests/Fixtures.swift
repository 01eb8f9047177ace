import LockstepCore
import LockstepJSON
import LockstepTestSupport

/// A reducer whose state has the shapes the differ must handle: nested structs, optionals,
/// arrays of structs, string-keyed dictionaries and an enum with associated values.
struct Board: Reducer {
    struct State: Codable, Equatable, Sendable {
        var title = "board"
        var cards: [Card] = []
        var labels: [String: Int] = [:]
        var owner: Person? = nil
        var mode: Mode = .idle
        var tags: [String] = []
    }

    struct Card: Codable, Equatable, Sendable {
        var id: Int
        var text: String
        var votes = 0
    }

    struct Person: Codable, Equatable, Sendable {
        var name: String
        var age: Int
    }

    enum Mode: Codable, Equatable, Sendable {
        case idle
        case editing(card: Int)
        case voting(round: Int, open: Bool)
    }

    enum Action: Codable, Equatable, Sendable {
        case rename(String)
        case addCard(at: Int, text: String)
        case removeCard(at: Int)
        case vote(card: Int)
        case edit(card: Int, text: String)
        case label(String, Int?)
        case own(Person?)
        case mode(Mode)
        case tag(String)
        case replaceCards([Card])
        case bumpAll
        case reject
    }

    var initialState: State { State() }

    func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
        switch action {
        case .rename(let title): state.title = title
        case .addCard(let at, let text):
            state.cards.insert(
                Card(id: (state.cards.map(\.id).max() ?? 0) + 1, text: text), at: min(at, state.cards.count))
        case .removeCard(let at):
            guard state.cards.indices.contains(at) else { throw Rejection("no card at \(at)") }
            state.cards.remove(at: at)
        case .vote(let card):
            guard state.cards.indices.contains(card) else { throw Rejection("no card at \(card)") }
            state.cards[card].votes += 1
        case .edit(let card, let text):
            guard state.cards.indices.contains(card) else { throw Rejection("no card at \(card)") }
            state.cards[card].text = text
        case .label(let key, let value): state.labels[key] = value
        case .own(let person): state.owner = person
        case .mode(let mode): state.mode = mode
        case .tag(let tag): state.tags.append(tag)
        case .replaceCards(let cards): state.cards = cards
        case .bumpAll:
            for index in state.cards.indices { state.cards[index].votes += 1 }
        case .reject:
            state.title = "changed before the refusal"
            throw Rejection("refused")
        }
        return .none
    }

    static func randomAction(using random: inout SplitMix64, cards: Int) -> Action {
        let words = ["a", "b", "c", "long text", "ü", "\"quoted\"", "a/b~c"]
        let word = words.randomElement(using: &random)!
        switch Int.random(in: 0..<12, using: &random) {
        case 0: return .rename(word)
        case 1, 2: return .addCard(at: Int.random(in: 0...cards, using: &random), text: word)
        case 3: return .removeCard(at: Int.random(in: 0...max(cards, 1), using: &random))
        case 4: return .vote(card: Int.random(in: 0...max(cards, 1), using: &random))
        case 5: return .edit(card: Int.random(in: 0...max(cards, 1), using: &random), text: word)
        case 6: return .label(word, Bool.random(using: &random) ? Int.random(in: 0..<5, using: &random) : nil)
        case 7:
            return .own(
                Bool.random(using: &random) ? Person(name: word, age: Int.random(in: 0..<99, using: &random)) : nil)
        case 8:
            return .mode(
                [
                    Mode.idle, .editing(card: Int.random(in: 0..<3, using: &random)),
                    .voting(round: Int.random(in: 0..<3, using: &random), open: Bool.random(using: &random)),
                ]
                .randomElement(using: &random)!)
        case 9: return .tag(word)
        case 10: return Bool.random(using: &random) ? .bumpAll : .replaceCards([Card(id: 1, text: word)])
        default: return .reject
        }
    }
}

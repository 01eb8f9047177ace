import Foundation
import LockstepJSON

/// One line typed at the prompt (or given to `--exec`), parsed before anything is sent, so a typo never reaches the
/// server and the user gets a message saying what was expected.
enum Command: Equatable, Sendable {
    case action(JSON)
    /// The room's latest change, or with `mine` this client's own latest change still in effect.
    case undo(mine: Bool)
    /// The latest undone change, or with `mine` the latest one this client's own undo took back.
    case redo(mine: Bool)
    case history(limit: Int?)
    /// Back to the state of a version, as one new change.
    case revert(to: Int)
    /// Shows the state of an earlier version without changing the room.
    case view(version: Int)
    /// An action the server applies `seconds` from now, as this client's change, even if it has gone by then; as
    /// timer `timer` (replacing a pending one of that name), or one the client names.
    case later(seconds: Double, timer: String?, action: JSON)
    /// Takes the room's pending timer away.
    case cancel(timer: String)
    /// Lists the room's pending timers.
    case timers
    case help
    case quit

    /// Parses `line` for `app`; `state` is the mirror, which `set` and `inc` read to choose their operations.
    init(parsing line: String, app: AppKind, state: JSON) throws(CommandError) {
        let text = line.trimmingCharacters(in: .whitespaces)
        let word = String(text.prefix { !$0.isWhitespace })
        let rest = text.dropFirst(word.count).trimmingCharacters(in: .whitespaces)
        switch word {
        case "": throw .empty
        case "undo", "redo":
            guard rest.isEmpty || rest == "mine" else { throw .usage("\(word) [mine]") }
            self = word == "undo" ? .undo(mine: rest == "mine") : .redo(mine: rest == "mine")
        case "help", "?": self = .help
        case "quit", "exit": self = .quit
        case "history", "log":
            guard rest.isEmpty || Int(rest).map({ $0 >= 0 }) == true else { throw .usage("\(word) [N]") }
            self = .history(limit: Int(rest))
        case "revert", "view":
            guard let version = Int(rest), version >= 0 else { throw .usage("\(word) VERSION (a version number)") }
            self = word == "revert" ? .revert(to: version) : .view(version: version)
        case "later":
            self = try Self.later(rest, app: app, state: state)
        case "cancel":
            guard !rest.isEmpty, !rest.contains(where: \.isWhitespace) else { throw .usage("cancel TIMER") }
            self = .cancel(timer: rest)
        case "timers":
            guard rest.isEmpty else { throw .usage("timers") }
            self = .timers
        case "raw":
            guard let action = try? JSON(parsing: rest) else { throw .usage("raw {\"type\":...} (a JSON action)") }
            self = .action(action)
        default:
            switch app {
            case .counter: self = try Self.counter(word, rest)
            case .todos: self = try Self.todos(word, rest)
            case .json: self = try Self.json(word, rest, state: state)
            }
        }
    }

    /// `later SECONDS [as NAME] COMMAND`: COMMAND must be one that sends an action; SECONDS from 0 to 7 days.
    private static func later(_ rest: String, app: AppKind, state: JSON) throws(CommandError) -> Command {
        let usage = CommandError.usage(
            "later SECONDS [as NAME] COMMAND (SECONDS from 0 to 604800; COMMAND sends an action)")
        var words = rest.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard words.count >= 2, let seconds = Double(words[0]), seconds >= 0, seconds <= 604_800 else { throw usage }
        words.removeFirst()
        var timer: String?
        if words.first == "as" {
            guard words.count >= 3 else { throw usage }
            timer = words[1]
            words.removeFirst(2)
        }
        guard case .action(let action) = try Command(parsing: words.joined(separator: " "), app: app, state: state)
        else { throw usage }
        return .later(seconds: seconds, timer: timer, action: action)
    }

    private static func counter(_ word: String, _ rest: String) throws(CommandError) -> Command {
        switch word {
        case "+": return .action(["type": "increment"])
        case "-": return .action(["type": "decrement"])
        case "reset": return .action(["type": "reset"])
        case "add":
            guard let amount = Int(rest) else { throw .usage("add N (a whole number)") }
            return .action(["type": "add", "amount": .int(amount)])
        default: throw .unknown(word, app: .counter)
        }
    }

    private static func todos(_ word: String, _ rest: String) throws(CommandError) -> Command {
        let idText = String(rest.prefix { !$0.isWhitespace })
        let id = Int(idText)
        let title = rest.dropFirst(idText.count).trimmingCharacters(in: .whitespaces)
        switch word {
        case "add":
            guard !rest.isEmpty else { throw .usage("add TITLE") }
            return .action(["type": "add", "title": .string(rest)])
        case "toggle", "remove":
            guard let id, title.isEmpty else { throw .usage("\(word) ID") }
            return .action(["type": .string(word), "id": .int(id)])
        case "rename":
            guard let id, !title.isEmpty else { throw .usage("rename ID TITLE") }
            return .action(["type": "rename", "id": .int(id), "title": .string(title)])
        case "clear": return .action(["type": "clearCompleted"])
        default: throw .unknown(word, app: .todos)
        }
    }

    private static func json(_ word: String, _ rest: String, state: JSON) throws(CommandError) -> Command {
        let pathText = String(rest.prefix { !$0.isWhitespace })
        let valueText = rest.dropFirst(pathText.count).trimmingCharacters(in: .whitespaces)
        let path: JSONPointer
        do {
            path = try JSONPointer(pathText)
        } catch {
            throw .usage("\(word) /path ... (a JSON Pointer such as /todo/0/title): \(error)")
        }
        let operations: [PatchOperation]
        switch word {
        case "set", "add":
            guard !valueText.isEmpty else { throw .usage("\(word) /path VALUE") }
            let value = Self.value(valueText)
            // `set` replaces an existing array element instead of inserting before it; elsewhere `add` creates
            // or replaces, as RFC 6902 defines it.
            let replacesElement = word == "set" && Self.lookup(path.parent, in: state)?.arrayValue != nil
                && Self.lookup(path, in: state) != nil
            operations = [replacesElement ? .replace(path: path, value: value) : .add(path: path, value: value)]
        case "remove":
            guard valueText.isEmpty else { throw .usage("remove /path") }
            operations = [.remove(path: path)]
        case "inc":
            guard let step = valueText.isEmpty ? 1 : Int(valueText) else { throw .usage("inc /path [N]") }
            guard let current = Self.lookup(path, in: state)?.intValue else {
                throw .usage("inc needs a whole number at \(path)")
            }
            // Optimistic: the test fails (and nothing changes) if someone changed the number meanwhile.
            operations = [.test(path: path, value: .int(current)), .replace(path: path, value: .int(current + step))]
        default: throw .unknown(word, app: .json)
        }
        return .action(["type": "patch", "ops": JSONPatch(operations).json])
    }

    /// A JSON value, or the text itself as a string when it is not JSON (so `set /name alice` works).
    static func value(_ text: String) -> JSON {
        (try? JSON(parsing: text)) ?? .string(text)
    }

    /// The value at `pointer` in `document`, if there is one.
    static func lookup(_ pointer: JSONPointer?, in document: JSON) -> JSON? {
        guard let pointer else { return nil }
        var current = document
        for token in pointer.tokens {
            switch current {
            case .object(let object):
                guard let next = object[token] else { return nil }
                current = next
            case .array(let array):
                guard let index = JSONPointer.arrayIndex(token), array.indices.contains(index) else { return nil }
                current = array[index]
            default:
                return nil
            }
        }
        return current
    }
}

/// The prompt's line: cursor movement, deletion and a history of typed commands, as a shell user expects.
struct LineEditor {
    private(set) var characters: [Character] = []
    private(set) var cursor = 0
    private var history: [String] = []
    private var historyIndex: Int?
    private var draft: [Character] = []

    var text: String { String(characters) }

    /// What a key did to the line.
    enum Outcome: Equatable {
        case edited
        case submitted(String)
        case quit
        case ignored
    }

    mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .text(let text):
            characters.insert(contentsOf: text, at: cursor)
            cursor += text.count
        case .enter:
            let line = text
            if line.contains(where: { !$0.isWhitespace }), history.last != line { history.append(line) }
            characters = []
            cursor = 0
            historyIndex = nil
            return .submitted(line)
        case .backspace:
            guard cursor > 0 else { return .ignored }
            cursor -= 1
            characters.remove(at: cursor)
        case .delete:
            guard cursor < characters.count else { return .ignored }
            characters.remove(at: cursor)
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(characters.count, cursor + 1)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = characters.count
        case .control("u"):
            characters.removeFirst(cursor)
            cursor = 0
        case .control("k"): characters.removeLast(characters.count - cursor)
        case .control("c"): return .quit
        case .control("d"):
            guard !characters.isEmpty else { return .quit }
            return handle(.delete)
        case .up:
            guard !history.isEmpty else { return .ignored }
            if historyIndex == nil { draft = characters }
            let index = max(0, (historyIndex ?? history.count) - 1)
            historyIndex = index
            characters = Array(history[index])
            cursor = characters.count
        case .down:
            guard let index = historyIndex else { return .ignored }
            if index + 1 < history.count {
                historyIndex = index + 1
                characters = Array(history[index + 1])
            } else {
                historyIndex = nil
                characters = draft
            }
            cursor = characters.count
        case .control: return .ignored
        }
        return .edited
    }
}

/// Draws the whole screen from scratch each time (simple, and cheap at terminal sizes): header, state, log, prompt,
/// each cut to the terminal's size.
struct Screen {
    /// Whether to use colours (a terminal, and `NO_COLOR` unset).
    var colors: Bool

    struct Content {
        var title: String
        var status: String
        var isLive: Bool
        var peers: String
        var state: StateView
        var log: [LogLine]
        var prompt: String
        var cursor: Int
    }

    /// One line of the activity log.
    struct LogLine {
        enum Style { case plain, mine, error, notice }
        var text: String
        var style: Style
    }

    func render(_ content: Content, rows: Int, columns: Int) -> [UInt8] {
        let rows = max(rows, 8)
        var out = "\u{1B}[?25l\u{1B}[H"
        var lines: [String] = []
        func add(_ text: String, _ style: String = "") {
            let cut = text.count > columns ? String(text.prefix(max(columns - 1, 0))) + "…" : text
            lines.append(style.isEmpty || !colors ? cut : style + cut + "\u{1B}[0m")
        }
        let statusStyle = content.isLive ? "\u{1B}[32m" : "\u{1B}[33m"
        let header = content.title + "  " + content.status
        if colors {
            let titleText = String(content.title.prefix(columns))
            let rest = String(("  " + content.status).prefix(max(columns - titleText.count, 0)))
            lines.append("\u{1B}[1m" + titleText + "\u{1B}[0m" + statusStyle + rest + "\u{1B}[0m")
        } else {
            add(header)
        }
        add(content.peers)
        let available = rows - 5
        var stateRows = available - max(3, available / 3)
        stateRows = min(stateRows, max(content.state.lines.count, 1))
        let logRows = available - stateRows
        add(rule("state", columns), "\u{1B}[2m")
        let stateLines = content.state.lines
        if stateLines.count <= stateRows {
            for line in stateLines { add(line.text, line.changed ? "\u{1B}[1;33m" : "") }
        } else {
            let shown = stateRows - 1
            let start = content.state.firstChanged.map { max(0, min($0 - 1, stateLines.count - shown)) } ?? 0
            for line in stateLines[start..<(start + shown)] { add(line.text, line.changed ? "\u{1B}[1;33m" : "") }
            add("… showing lines \(start + 1)-\(start + shown) of \(stateLines.count)",
                "\u{1B}[2m")
        }
        while lines.count < 3 + stateRows { add("") }
        add(rule("log", columns), "\u{1B}[2m")
        let log = content.log.suffix(logRows)
        for _ in 0..<(logRows - log.count) { add("") }
        for line in log {
            switch line.style {
            case .plain: add(line.text)
            case .mine: add(line.text, "\u{1B}[36m")
            case .error: add(line.text, "\u{1B}[31m")
            case .notice: add(line.text, "\u{1B}[33m")
            }
        }
        // The prompt scrolls horizontally to keep the cursor visible.
        let room = max(columns - 3, 1)
        let start = max(0, content.cursor - room)
        let visible = String(Array(content.prompt)[start..<min(content.prompt.count, start + room)])
        lines.append("> " + visible)
        out += lines.joined(separator: "\u{1B}[K\r\n") + "\u{1B}[K\u{1B}[J"
        out += "\u{1B}[\(lines.count);\(content.cursor - start + 3)H\u{1B}[?25h"
        return Array(out.utf8)
    }

    private func rule(_ title: String, _ columns: Int) -> String {
        let head = "── \(title) "
        return head + String(repeating: "─", count: max(columns - head.count, 0))
    }
}

import LockstepJSON

/// The state pretty-printed one line per value, each line knowing the JSON Pointer it shows, so the lines a patch
/// changed can be highlighted and scrolled into view.
struct StateView {
    struct Line {
        var text: String
        var path: JSONPointer
        var changed = false
    }

    private(set) var lines: [Line] = []

    /// Lays out `state`, marking lines at or under `changed` (and the container of a removed value).
    init(_ state: JSON, changed: [JSONPointer]) {
        var marks = changed
        for path in changed where Command.lookup(path, in: state) == nil {
            if let parent = path.parent { marks.append(parent) }
        }
        append(state, path: .root, prefix: "", indent: "", comma: false)
        for index in lines.indices {
            let path = lines[index].path
            lines[index].changed = marks.contains { path == $0 || path.isStrictDescendant(of: $0) }
        }
    }

    /// The first changed line, to keep it on screen.
    var firstChanged: Int? { lines.firstIndex { $0.changed } }

    private mutating func append(_ value: JSON, path: JSONPointer, prefix: String, indent: String, comma: Bool) {
        let tail = comma ? "," : ""
        switch value {
        case .object(let object) where !object.isEmpty:
            lines.append(Line(text: indent + prefix + "{", path: path))
            for (offset, member) in object.enumerated() {
                let key = JSON.string(member.key).serialized(prettyPrinted: false) + ": "
                append(member.value, path: path.appending(member.key), prefix: key, indent: indent + "  ",
                       comma: offset < object.count - 1)
            }
            lines.append(Line(text: indent + "}" + tail, path: path))
        case .array(let array) where !array.isEmpty:
            lines.append(Line(text: indent + prefix + "[", path: path))
            for (offset, element) in array.enumerated() {
                append(element, path: path.appending(index: offset), prefix: "", indent: indent + "  ",
                       comma: offset < array.count - 1)
            }
            lines.append(Line(text: indent + "]" + tail, path: path))
        default:
            lines.append(Line(text: indent + prefix + value.serialized(prettyPrinted: false) + tail, path: path))
        }
    }
}

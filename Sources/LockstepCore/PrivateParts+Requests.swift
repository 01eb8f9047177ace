public import LockstepJSON

/// What a request may reach under private parts, checked against the room's state before anything runs.
extension PrivateParts {
    /// Why `operations`, run on `document` by `reader`, would read or write someone else's private part, or nil.
    ///
    /// Refused: a `path` or `from` inside, equal to or above a private subtree of someone else that exists when the
    /// operation runs (a `test` and the `from` of a `copy` read what they reach), and a value put anywhere that
    /// carries one (`add`, `replace`, and what a `copy` or `move` carries). Each operation is checked on the document
    /// as the operations before it left it, so a patch cannot move a subtree out of sight and then read it.
    public func refusal(of operations: JSONPatch, on document: JSON, by reader: String?) -> String? {
        guard !isEmpty else { return nil }
        var scratch = document
        for (index, operation) in operations.operations.enumerated() {
            for place in operation.places {
                if hides(place, from: reader) { return "\(place) is someone else's private part of the room" }
                if let value = scratch.value(at: place), redact(value, at: place, for: reader) != value {
                    return "\(place) holds someone else's private part of the room"
                }
            }
            let carried: JSON? =
                switch operation {
                case .add(_, let value), .replace(_, let value), .test(_, let value): value
                case .copy(let from, _), .move(let from, _): scratch.value(at: from)
                case .remove: nil
                }
            if let carried, redact(carried, at: operation.path, for: reader) != carried {
                return "\(operation.path) would hold someone else's private part of the room"
            }
            // The rest is checked on what this operation leaves; one that fails fails the whole patch anyway.
            guard index < operations.operations.count - 1,
                (try? JSONPatch([operation]).apply(to: &scratch)) != nil
            else { break }
        }
        return nil
    }

    /// Whether `text` names a value that `reader` may not see in `document`: a string, number or boolean inside
    /// someone else's private subtree that appears nowhere the reader can see, standing as a word of its own. Words for
    /// a client (an app's reason for a refusal) are checked with it before they leave.
    public func reveals(_ text: String, of document: JSON, to reader: String?) -> Bool {
        guard !isEmpty else { return false }
        var hidden: [String] = []
        Self.collectLeaves(of: document, at: .root, parts: self, reader: reader, hidden: false, into: &hidden)
        guard !hidden.isEmpty else { return false }
        var visible: [String] = []
        Self.collectLeaves(of: redact(document, at: .root, for: reader), into: &visible)
        let seen = Set(visible)
        return hidden.contains { !seen.contains($0) && Self.containsWord($0, in: text) }
    }

    /// Every leaf of `value` as text.
    private static func collectLeaves(of value: JSON, into leaves: inout [String]) {
        switch value {
        case .object(let object): for key in object.keys { collectLeaves(of: object[key]!, into: &leaves) }
        case .array(let elements): for element in elements { collectLeaves(of: element, into: &leaves) }
        case .string(let text): leaves.append(text)
        case .null: break
        default: leaves.append(String(decoding: value.serialized(), as: UTF8.self))
        }
    }

    private static func collectLeaves(
        of value: JSON, at pointer: JSONPointer, parts: PrivateParts, reader: String?, hidden: Bool,
        into leaves: inout [String]
    ) {
        let hidden = hidden || parts.hides(pointer, from: reader)
        switch value {
        case .object(let object):
            // Below a place where nothing is hidden and no pattern reaches, nothing is.
            guard hidden || parts.redact(value, at: pointer, for: reader) != value else { return }
            for key in object.keys {
                collectLeaves(
                    of: object[key]!, at: pointer.appending(key), parts: parts, reader: reader, hidden: hidden,
                    into: &leaves)
            }
        case .array(let elements):
            guard hidden || parts.redact(value, at: pointer, for: reader) != value else { return }
            for (index, element) in elements.enumerated() {
                collectLeaves(
                    of: element, at: pointer.appending(index: index), parts: parts, reader: reader, hidden: hidden,
                    into: &leaves)
            }
        case .string(let text):
            if hidden { leaves.append(text) }
        case .null:
            break
        default:
            if hidden { leaves.append(String(decoding: value.serialized(), as: UTF8.self)) }
        }
    }

    /// Whether `word` stands in `text` with no letter or digit touching it on either side.
    private static func containsWord(_ word: String, in text: String) -> Bool {
        guard !word.isEmpty else { return false }
        let isWordCharacter = { (character: Character) in character.isLetter || character.isNumber }
        var start = text.startIndex
        while start < text.endIndex {
            if text[start...].hasPrefix(word) {
                let end = text.index(start, offsetBy: word.count)
                let before = start == text.startIndex ? nil : text[text.index(before: start)]
                let after = end == text.endIndex ? nil : text[end]
                if !(before.map(isWordCharacter) ?? false) && !(after.map(isWordCharacter) ?? false) { return true }
            }
            start = text.index(after: start)
        }
        return false
    }
}

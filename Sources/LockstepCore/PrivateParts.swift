public import LockstepJSON

/// The parts of a room that only their owner sees: a player's hand, a ballot, a draft.
///
/// Each pattern is a JSON Pointer in which one whole segment may be `{sub}`: with `/hands/{sub}`, the subtree at
/// `/hands/alice` is visible only to connections whose token has `"sub":"alice"`. A pattern without `{sub}` is
/// visible to no client. A reader without a subject sees no private subtree.
public struct PrivateParts: Sendable, Hashable {
    /// Each pattern's segments; `nil` stands for `{sub}`.
    private let patterns: [[String?]]

    /// No private parts: every client sees everything.
    public static let none = PrivateParts(checked: [])

    /// Private parts from patterns such as `/hands/{sub}`; throws when one is not a JSON Pointer, is the whole room, or
    /// has `{sub}` in more than one segment.
    public init(_ patterns: [String]) throws(PrivatePartsError) {
        self.init(
            checked: try patterns.map { text throws(PrivatePartsError) in
                let pointer: JSONPointer
                do {
                    pointer = try JSONPointer(text)
                } catch {
                    throw .notAPointer(text)
                }
                guard !pointer.isRoot else { throw .wholeRoom }
                let segments = pointer.tokens.map { $0 == "{sub}" ? nil : $0 }
                guard segments.filter({ $0 == nil }).count <= 1 else { throw .severalSubjects(text) }
                return segments
            })
    }

    private init(checked: [[String?]]) {
        patterns = checked
    }

    /// Whether there are no patterns, so every client sees everything and no view needs redacting.
    public var isEmpty: Bool { patterns.isEmpty }

    /// Both sets of patterns.
    public func union(_ other: PrivateParts) -> PrivateParts {
        PrivateParts(checked: patterns + other.patterns.filter { !patterns.contains($0) })
    }

    /// Whether `pointer` is at or inside a private subtree that `reader` may not see.
    public func hides(_ pointer: JSONPointer, from reader: String?) -> Bool {
        patterns.contains { pattern in
            guard pointer.tokens.count >= pattern.count, let owner = Self.match(pattern, pointer) else { return false }
            return owner == nil || owner != reader
        }
    }

    /// Whether every place `operations` write or read is inside a private subtree: then only the owners of the
    /// subtrees they touch (``touched(by:)``) can see anything of them.
    public func isWhollyPrivate(_ operations: JSONPatch) -> Bool {
        !isEmpty && !operations.operations.isEmpty
            && operations.operations.allSatisfy { operation in
                operation.places.allSatisfy { place in
                    patterns.contains { place.tokens.count >= $0.count && Self.match($0, place) != nil }
                }
            }
    }

    /// Whether `pointer` follows `pattern` as far as either goes: nil if not, else the `{sub}` it binds, if any.
    private static func match(_ pattern: [String?], _ pointer: JSONPointer) -> String?? {
        var owner: String?
        for (segment, token) in zip(pattern, pointer.tokens) {
            if let segment {
                guard segment == token else { return nil }
            } else {
                owner = token
            }
        }
        return .some(owner)
    }

    /// `value`, found at `pointer`, without the private subtrees below it that `reader` may not see. (Whether
    /// `pointer` itself is hidden is ``hides(_:from:)``.)
    public func redact(_ value: JSON, at pointer: JSONPointer, for reader: String?) -> JSON {
        var result = value
        for pattern in patterns where pattern.count > pointer.tokens.count {
            // Below a subtree that is the reader's own, nothing of this pattern is hidden.
            guard let owner = Self.match(pattern, pointer), owner == nil || owner != reader else { continue }
            Self.remove(Array(pattern.dropFirst(pointer.tokens.count)), from: &result, reader: reader)
        }
        return result
    }

    /// Removes from `value` every subtree that `rest` (the pattern's remaining segments) reaches and `reader` may
    /// not see.
    private static func remove(_ rest: [String?], from value: inout JSON, reader: String?) {
        guard case .object(var object) = value, let first = rest.first else { return }
        let last = rest.count == 1
        if let name = first {
            guard var member = object[name] else { return }
            if last {
                object[name] = nil
            } else {
                remove(Array(rest.dropFirst()), from: &member, reader: reader)
                object[name] = member
            }
        } else {
            for key in Array(object.keys) where key != reader {
                if last {
                    object[key] = nil
                } else if var member = object[key] {
                    remove(Array(rest.dropFirst()), from: &member, reader: reader)
                    object[key] = member
                }
            }
        }
        value = .object(object)
    }
}

/// Why a private pattern cannot be used.
public enum PrivatePartsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pattern is not a JSON Pointer.
    case notAPointer(String)
    /// The pattern is the empty pointer: the whole room cannot be private.
    case wholeRoom
    /// The pattern has `{sub}` in more than one segment.
    case severalSubjects(String)

    public var description: String {
        switch self {
        case .notAPointer(let text):
            "private pattern \(text) is not a JSON Pointer: write it like /hands/{sub}"
        case .wholeRoom:
            "a private pattern cannot be the whole room (the empty pointer)"
        case .severalSubjects(let text):
            "private pattern \(text) has {sub} more than once: one segment at most"
        }
    }
}

extension PrivateParts {
    /// Whose private parts a change wrote: the subjects owning a subtree it wrote into or carried, and whether it
    /// wrote one that no client sees.
    public struct Touched: Sendable, Hashable {
        /// The subjects whose private subtrees the change wrote into or carried.
        public var owners: Set<String> = []
        /// Whether the change wrote a subtree of a pattern without `{sub}`, which no client sees.
        public var unowned = false

        /// What a change touched: `owners`' subtrees, and whether also an unowned one.
        public init(owners: Set<String> = [], unowned: Bool = false) {
            self.owners = owners
            self.unowned = unowned
        }

        /// Whether `reader` may see everything the change wrote (and so its `action`).
        public func isVisible(to reader: String?) -> Bool {
            !unowned && owners.allSatisfy { $0 == reader }
        }
    }

    /// Whose private parts a change of `operations` wrote into or carried, or its `action` reached: an action that
    /// is itself JSON Patch operations (`{"ops":[...]}`) shows the values it tests and where it read, so it is
    /// another's to see only when every place it names is theirs to see.
    public func touched(by operations: JSONPatch, action: JSON?) -> Touched {
        var touched = touched(by: operations)
        guard !isEmpty, let requested = action.flatMap(Self.operations(in:)) else { return touched }
        let reached = self.touched(by: requested)
        touched.owners.formUnion(reached.owners)
        touched.unowned = touched.unowned || reached.unowned
        return touched
    }

    /// The JSON Patch operations an action carries as its `ops`, if it does.
    public static func operations(in action: JSON) -> JSONPatch? {
        guard case .array(let ops)? = action["ops"] else { return nil }
        return try? JSONPatch(ops.map { try PatchOperation(json: $0) })
    }

    /// Whose private parts `operations` write into, or carry in their values.
    public func touched(by operations: JSONPatch) -> Touched {
        var touched = Touched()
        guard !isEmpty else { return touched }
        for operation in operations.operations {
            for place in operation.places { note(place, in: &touched) }
            switch operation {
            case .add(let path, let value), .replace(let path, let value): noteInside(value, at: path, in: &touched)
            default: break
            }
        }
        return touched
    }

    /// The owner of the private subtree `pointer` is at or in, if it is in one.
    private func note(_ pointer: JSONPointer, in touched: inout Touched) {
        for pattern in patterns where pointer.tokens.count >= pattern.count {
            guard let owner = Self.match(pattern, pointer) else { continue }
            if let owner { touched.owners.insert(owner) } else { touched.unowned = true }
        }
    }

    /// The owners of private subtrees inside `value`, found at `pointer`.
    private func noteInside(_ value: JSON, at pointer: JSONPointer, in touched: inout Touched) {
        for pattern in patterns where pattern.count > pointer.tokens.count {
            guard let owner = Self.match(pattern, pointer) else { continue }
            Self.collect(Array(pattern.dropFirst(pointer.tokens.count)), in: value, owner: owner, into: &touched)
        }
    }

    private static func collect(_ rest: [String?], in value: JSON, owner: String?, into touched: inout Touched) {
        guard case .object(let object) = value, let first = rest.first else { return }
        let members: [(String, JSON)] =
            if let first { object[first].map { [(first, $0)] } ?? [] } else { object.keys.map { ($0, object[$0]!) } }
        for (key, member) in members {
            let owner = first == nil ? key : owner
            if rest.count == 1 {
                if let owner { touched.owners.insert(owner) } else { touched.unowned = true }
            } else {
                collect(Array(rest.dropFirst()), in: member, owner: owner, into: &touched)
            }
        }
    }
}

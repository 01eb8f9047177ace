public import LockstepJSON

/// One step of an app's state history: rewrites a stored state of version ``from`` into the shape of `from + 1`.
///
/// A server runs it on the JSON it stored, before that JSON is decoded as the app's `State`, so the old Swift type
/// need not exist any more:
///
/// ```swift
/// Migration(from: 1) { state in
///     try state.setMember("archived", to: false)
///     try state.modifyEach("/cards") { card in try card.renameMember("text", to: "title") }
/// }
/// ```
///
/// A migration is pure: the same stored JSON always gives the same result, since every server of a cluster migrates
/// the rooms it loads on its own. Throw to refuse a state it cannot bring forward; the room is then kept as stored.
public struct Migration: Sendable {
    /// The state version this step reads; it writes `from + 1`.
    public let from: Int
    private let body: @Sendable (inout JSON) throws -> Void

    /// A step that edits the stored JSON in place.
    public init(from version: Int, _ body: @escaping @Sendable (_ state: inout JSON) throws -> Void) {
        precondition(version >= 1, "state versions start at 1; a migration from \(version) can never run")
        from = version
        self.body = body
    }

    /// A step between two Swift types: the stored JSON is decoded as `Old`, and `body`'s result encoded in its place.
    ///
    /// Keep the old type (renamed, e.g. `BoardV1`) for as long as rooms of that version may still be stored.
    public init<Old: Decodable & SendableMetatype, New: Encodable & SendableMetatype>(
        from version: Int, decoding old: Old.Type, _ body: @escaping @Sendable (Old) throws -> New
    ) {
        self.init(from: version) { state in
            state = try JSON(encoding: try body(try state.decode(Old.self)))
        }
    }

    /// Runs the step on `state`.
    func apply(to state: inout JSON) throws(MigrationError) {
        do {
            try body(&state)
        } catch {
            throw .failed(from: from, reason: DecodingErrorDescription(error).text)
        }
    }
}

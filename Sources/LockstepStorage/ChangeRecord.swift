public import LockstepCore
public import LockstepJSON

/// What a log keeps beside a change's patch message to take it back: its inverse operations, and for a change with
/// an author, who that is and the app's compensation (undo mine).
///
/// Stored as `{"inverse":[...],"author":..,"compensation":..}`; a log written before changes had authors holds the
/// inverse operations alone, as a JSON array, and still reads.
public struct ChangeRecord: Sendable, Equatable {
    public var inverse: JSONPatch
    /// Whose change it is (``Sender/author``); nil for one without a sender.
    public var author: String?
    /// What takes it back on top of later changes; nil for its guarded inverse.
    public var compensation: JSON?
    /// For an undo mine or redo mine: the version of the change whose take-back ran.
    public var taking: Int?

    public init(inverse: JSONPatch, author: String? = nil, compensation: JSON? = nil, taking: Int? = nil) {
        self.inverse = inverse
        self.author = author
        self.compensation = compensation
        self.taking = taking
    }

    /// The record of `change`, with what the room's author history kept of it.
    public init(_ change: Change, authors: AuthorHistory) {
        let kept = authors.record(change.version)
        self.init(
            inverse: change.inverse, author: kept?.author, compensation: kept?.compensation, taking: kept?.mine?.taking)
    }

    public init(bytes: [UInt8]) throws {
        let json = try JSON(parsing: bytes)
        guard case .object = json else {
            self.init(inverse: try JSONPatch(json: json))
            return
        }
        self.init(
            inverse: try JSONPatch(json: json["inverse"] ?? .null), author: json["author"]?.stringValue,
            compensation: json["compensation"], taking: json["taking"]?.intValue)
    }

    /// Written member by member, not as a `JSON` tree: this runs on the loop for every durable change.
    public func serialized() -> [UInt8] {
        guard author != nil || compensation != nil || taking != nil else { return inverse.serialized() }
        var object = JSONObjectWriter()
        object.member("inverse", inverse)
        if let author { object.member("author", .string(author)) }
        if let compensation { object.member("compensation", compensation) }
        if let taking { object.member("taking", .int(taking)) }
        return object.finished()
    }
}

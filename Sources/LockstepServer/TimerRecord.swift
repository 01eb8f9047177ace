import LockstepCore
import LockstepJSON
import LockstepStorage

/// What a pending timer applies and for whom, as it is stored with its room: the action and its `id`, and the sender
/// as it was when the action was scheduled (its change is that sender's, its session's for `undo mine`).
struct TimerRecord: Equatable {
    var id: String?
    var action: JSON
    var sender: Sender

    /// The stored form: one JSON object.
    var encoded: [UInt8] {
        var object: JSONObject = [
            "action": action, "client": .string(sender.client), "author": .string(sender.author),
        ]
        if let id { object["id"] = .string(id) }
        if let name = sender.name { object["name"] = .string(name) }
        if let session = sender.session { object["session"] = .string(session) }
        if let subject = sender.subject { object["sub"] = .string(subject) }
        if let role = sender.role { object["role"] = .string(role) }
        return JSON.object(object).serialized()
    }

    init(id: String?, action: JSON, sender: Sender) {
        self.id = id
        self.action = action
        self.sender = sender
    }

    /// Reads a stored record; nil for one this server cannot read.
    init?(_ bytes: [UInt8]) {
        guard let json = try? JSON(parsing: bytes), let action = json["action"],
            let client = json["client"]?.stringValue, let author = json["author"]?.stringValue
        else { return nil }
        id = json["id"]?.stringValue
        self.action = action
        sender = Sender(
            client: client, name: json["name"]?.stringValue, session: json["session"]?.stringValue,
            subject: json["sub"]?.stringValue, role: json["role"]?.stringValue)
        sender.author = author
    }

    /// The `timers` entry of `GET /rooms/ROOM/timers`; without the action on a server with private parts.
    func listing(of timer: StoredTimer, withAction: Bool) -> JSON {
        var object: JSONObject = [
            "timer": .string(timer.name), "due": .int(timer.due), "client": .string(sender.client),
        ]
        if let name = sender.name { object["name"] = .string(name) }
        if withAction { object["action"] = action }
        return .object(object)
    }
}

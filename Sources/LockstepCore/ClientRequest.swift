public import LockstepJSON

/// A client message with its `seq`: the number a client with a session gives each change request, so a request
/// sent again after a reconnection is recognised and not applied twice.
///
/// `seq` is read beside ``ClientMessage`` so the message cases keep their shapes. Every request but `history` and
/// `presence` may carry one.
public struct ClientRequest: Sendable, Equatable {
    /// Largest `seq` the protocol allows: 2^53 - 1, the largest integer every JSON reader keeps exactly.
    public static let maxSeq = (1 << 53) - 1

    /// What the client asks.
    public var message: ClientMessage
    /// The request's `seq`: its number in the client's session, or nil when it has none (or is a `history` or a
    /// `presence`).
    public var seq: Int?
    /// An action's `after` and `timer`: the server applies it later.
    public var timer: TimerRequest?

    /// A request for `message`, numbered `seq` when the client has a session, scheduled by `timer`.
    public init(message: ClientMessage, seq: Int? = nil, timer: TimerRequest? = nil) {
        self.message = message
        self.seq = seq
        self.timer = timer
    }

    /// Reads a message and its `seq`; a `seq` that is not an integer from 1 to ``maxSeq`` is `bad_message`.
    public init(json: JSON) throws(WireError) {
        message = try ClientMessage(json: json)
        timer = try TimerRequest.read(from: json, for: message)
        guard Self.carriesSeq(message) else { return }
        switch json["seq"] {
        case nil, .null?:
            seq = nil
        case let value?:
            guard let number = value.intValue, (1...Self.maxSeq).contains(number) else {
                throw .badMessage("\"seq\" must be an integer from 1 to \(Self.maxSeq)")
            }
            seq = number
        }
    }

    /// Whether a message is a change request (numbered with `seq`); `history` and `presence` are not.
    public static func carriesSeq(_ message: ClientMessage) -> Bool {
        switch message {
        case .history, .presence: false
        default: true
        }
    }

    /// The message as the client sends it, with `seq`, `after` and `timer` beside its other fields.
    public var json: JSON {
        guard seq != nil || timer != nil, case .object(var object) = message.json else { return message.json }
        if let seq { object["seq"] = .int(seq) }
        if let timer {
            object["after"] = .int(timer.after)
            if let name = timer.name { object["timer"] = .string(name) }
        }
        return .object(object)
    }
}

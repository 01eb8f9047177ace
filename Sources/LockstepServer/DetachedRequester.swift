import LockstepCore
import Logging

/// A request the server makes on someone's behalf, which nobody waits for: a timer that came due, or the app's action
/// for a client joining or leaving. Applied as `sender`'s, in the room's order; an action the app rejects changes
/// nothing and is gone, which the log says. Loop-bound.
final class DetachedRequester: Requester {
    let room: Room
    private let from: Sender
    private let logger: Logger

    init(room: Room, sender: Sender, logger: Logger) {
        self.room = room
        from = sender
        self.logger = logger
    }

    var client: String { from.client }
    var subject: String? { from.subject }
    var role: AccessRole? { from.role.flatMap(AccessRole.init(rawValue:)) }
    var sessionName: SessionName? { nil }

    func sender(run: String) -> Sender { from }

    func answer(_ answer: RequestAnswer) {
        guard case .error(_, let code, let message) = answer else { return }
        logger.info(
            "an action the server applied for a client changed nothing",
            metadata: ["room": "\(room.name)", "client": "\(from.client)", "code": "\(code)", "reason": "\(message)"])
    }
}

@available(*, unavailable)
extension DetachedRequester: Sendable {}

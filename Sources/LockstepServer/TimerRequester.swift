import LockstepCore
import Logging

/// A timer that came due: its action applied as its sender scheduled it, in the room's order. Nobody waits for the
/// answer: an action the app rejects then changes nothing and is gone, which the log says. Loop-bound.
final class TimerRequester: Requester {
    let room: Room
    let record: TimerRecord
    private let logger: Logger

    init(room: Room, record: TimerRecord, logger: Logger) {
        self.room = room
        self.record = record
        self.logger = logger
    }

    var client: String { record.sender.client }
    var subject: String? { record.sender.subject }
    var role: AccessRole? { record.sender.role.flatMap(AccessRole.init(rawValue:)) }
    var sessionName: SessionName? { nil }

    func sender(run: String) -> Sender { record.sender }

    func answer(_ answer: RequestAnswer) {
        guard case .error(_, let code, let message) = answer else { return }
        logger.info(
            "a timer's action changed nothing", metadata: ["room": "\(room.name)", "code": "\(code)", "reason": "\(message)"])
    }
}

@available(*, unavailable)
extension TimerRequester: Sendable {}

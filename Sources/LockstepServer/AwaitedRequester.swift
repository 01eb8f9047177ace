import LockstepCore

/// A request sent from Swift (``SyncServer/send(_:to:from:)``): applied in the room's order like a client's, and its
/// answer handed to the caller waiting for it. Loop-bound.
final class AwaitedRequester: RequesterWithoutConnection {
    let room: Room
    var client: String { "server" }
    let from: RequestSender
    private let number: Int
    private var continuation: CheckedContinuation<RequestAnswer, Never>?

    init(room: Room, from: RequestSender, number: Int, continuation: CheckedContinuation<RequestAnswer, Never>) {
        self.room = room
        self.from = from
        self.number = number
        self.continuation = continuation
    }

    func sender(run: String) -> Sender {
        from.sender(client: client, connection: "\(run)/server-\(number)")
    }

    func answer(_ answer: RequestAnswer) {
        continuation?.resume(returning: answer)
        continuation = nil
    }
}

@available(*, unavailable)
extension AwaitedRequester: Sendable {}

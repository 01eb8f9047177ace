import Synchronization

/// Hands values to a receiver in order, on the isolation an app chose (the main actor for a UI), or at once on the
/// sender's when it chose none, so an observable object changes on one isolation only.
final class UpdateFeed<Value: Sendable>: Sendable {
    private let isolation: (any Actor)?
    private let continuation: AsyncStream<Value>.Continuation
    private let stream: Mutex<AsyncStream<Value>?>
    private let receiver = Mutex<Receiver?>(nil)

    /// The receiver, in a struct of its own: an optional function held directly in the generic `Mutex` is
    /// reabstracted by every `withLock`, whose `inout` write-back stores it wrapped in two more thunks, so each value
    /// sent would call through a chain as long as the number of values sent before it.
    private struct Receiver: Sendable {
        let call: @Sendable (Value) -> Void
    }

    init(isolation: (any Actor)?) {
        self.isolation = isolation
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        self.stream = Mutex(stream)
        self.continuation = continuation
    }

    /// Starts handing values to `receiver`; values sent before wait for it.
    func start(_ receiver: @escaping @Sendable (Value) -> Void) {
        guard let stream = self.stream.withLock({ $0.take() }) else { return }
        if let isolation {
            Task { await Self.drain(stream, on: isolation, into: receiver) }
        } else {
            self.receiver.withLock { $0 = Receiver(call: receiver) }
        }
    }

    func send(_ value: Value) {
        if isolation == nil, let receiver = receiver.withLock({ $0 }) {
            receiver.call(value)
        } else {
            continuation.yield(value)
        }
    }

    /// Ends the feed once the values already sent are handed over.
    func finish() {
        continuation.finish()
    }

    private static func drain(
        _ stream: AsyncStream<Value>, on isolation: isolated any Actor, into receiver: @Sendable (Value) -> Void
    ) async {
        for await value in stream { receiver(value) }
    }
}

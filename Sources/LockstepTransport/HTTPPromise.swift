import Synchronization

/// An HTTP answer that comes later: `respond(to:)` returns `.deferred(promise)`, keeps the promise, and calls
/// `complete(with:)` from any thread once the answer is ready (e.g. after a database query), so the loop never waits.
///
/// Until then nothing is written and the connection may wait up to `responseWaitTimeoutSeconds`, after which
/// libwebsockets closes it. Completing after the client went away, or a second time, does nothing.
// @unchecked Sendable: `state` is a Mutex; `wsi`, `isHead` and `server` are touched only on the loop thread.
public final class HTTPPromise: @unchecked Sendable, Equatable {
    private struct State {
        /// The loop of the server waiting for the answer; nil until the promise is returned from `respond(to:)`.
        var loop: ServiceLoop?
        var response: HTTPResponse?
        var completed = false
    }

    private let state = Mutex(State())
    /// The connection waiting for the answer; nil before it is attached and once it is answered or gone. Loop thread.
    var wsi: OpaquePointer?
    /// Whether the request was a HEAD (the answer then has no body). Loop thread.
    var isHead = false
    /// The server whose connection waits, which writes the answer at the end of the pass it came in. Loop thread.
    private weak var server: WebSocketServer?

    public init() {}

    /// Sends `response` as the answer; the first call wins, later ones and those after the client left do nothing.
    /// Any thread.
    public func complete(with response: HTTPResponse) {
        let loop: ServiceLoop? = state.withLock { state in
            guard !state.completed else { return nil }
            state.completed = true
            state.response = response
            return state.loop
        }
        guard let loop else { return }
        // On the loop (an answer from a room's own work), the answer joins the others of this pass: no wake.
        if loop.isCurrent { return scheduleAnswer() }
        loop.execute { [self] in scheduleAnswer() }
    }

    /// Has the server write the answer at the end of this pass. Loop thread.
    private func scheduleAnswer() {
        guard wsi != nil, let server else { return }
        server.scheduleAnswer(self)
    }

    /// Binds the promise to the connection waiting for it; false when it already answers another request. Returns
    /// whether the answer is ready already, in `ready`. Loop thread.
    func attach(to wsi: OpaquePointer, server: WebSocketServer, isHead: Bool) -> (attached: Bool, ready: Bool) {
        let (attached, ready) = state.withLock { state -> (Bool, Bool) in
            guard state.loop == nil else { return (false, false) }
            state.loop = server.loop
            return (true, state.completed)
        }
        if attached {
            self.wsi = wsi
            self.server = server
            self.isHead = isHead
        }
        return (attached, ready)
    }

    /// The answer, once, when it is ready; the promise then lets go of the connection. Loop thread.
    func takeResponse() -> HTTPResponse? {
        let response = state.withLock { state -> HTTPResponse? in
            defer { state.response = nil }
            return state.response
        }
        if response != nil { wsi = nil }
        return response
    }

    /// The client went away: a later `complete(with:)` finds no connection. Loop thread.
    func detach() {
        wsi = nil
    }

    public static func == (lhs: HTTPPromise, rhs: HTTPPromise) -> Bool { lhs === rhs }
}

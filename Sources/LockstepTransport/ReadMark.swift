internal import CLibWebSockets

/// How much of a connection's input had been read when its last HTTP transaction ended: tells a request sent before
/// the answer to the one ahead of it (pipelined) from one sent after.
///
/// libwebsockets 4.1 keeps what one read brought past a request in a buffer of the connection and parses the next
/// request from there. For a request with a body it then reads that buffer once more from its start, head included,
/// as the body, and once the answer ends the transaction it loops forever on the bytes left (`lws_http_action`,
/// lib/roles/http/server/server.c, 4.1.6). Such a request must be refused before it gets there. libwebsockets reads
/// nothing from a socket while that buffer holds input, so a request parsed with no byte read since the last
/// transaction ended came from it; the socket's own count of bytes taken tells.
///
/// lws binds the protocol again (`LWS_CALLBACK_HTTP_DROP_PROTOCOL`, then `LWS_CALLBACK_HTTP_BIND_PROTOCOL`, with
/// fresh per-session data) when a keep-alive transaction ends, before any input past it is read, and just before
/// handing each request over. A binding that drops the per-session data of a request handed over ends its
/// transaction; the count is taken then, and for a request with a body once more when it is handed over.
struct ReadMark {
    /// Bytes taken when the last transaction of a request handed over ended; `none` before one has.
    private var transactionEnd = Self.none
    /// Bindings since then: one, the request's own, unless lws ended a transaction of its own in between (a request
    /// it answered itself), which leaves the count unknown.
    private var bindingsSince = 0
    /// The binding about to happen ends a request's transaction.
    private var endingTransaction = false

    /// At `LWS_CALLBACK_HTTP_DROP_PROTOCOL`: whether the per-session data dropped held a request handed over.
    mutating func noteDrop(endingARequest: Bool) {
        endingTransaction = endingARequest
    }

    /// At `LWS_CALLBACK_HTTP_BIND_PROTOCOL`.
    mutating func noteBinding(of wsi: OpaquePointer) {
        if endingTransaction {
            transactionEnd = CLibWebSockets_bytes_taken(lws_get_socket_fd(wsi))
            bindingsSince = 0
        } else {
            bindingsSince += 1
        }
        endingTransaction = false
    }

    /// Whether the request `wsi` is handing over (bound since) was read with an earlier request's input. A count
    /// that cannot be known counts as one that says so.
    func isBuffered(_ wsi: OpaquePointer) -> Bool {
        // The connection's first request: nothing came before it.
        if transactionEnd == Self.none && bindingsSince == 1 { return false }
        guard bindingsSince == 1, transactionEnd != Self.unknown else { return true }
        return CLibWebSockets_bytes_taken(lws_get_socket_fd(wsi)) == transactionEnd
    }

    /// No transaction has ended.
    private static let none = Int64.min
    /// What `CLibWebSockets_bytes_taken` answers when the socket cannot tell.
    private static let unknown: Int64 = -1
}

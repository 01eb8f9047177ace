internal import CLibWebSockets

/// The protocol callback of every client context: the connection is the connect call's `userdata`, the client is
/// `lws_context_user`. Runs on the loop thread.
func clientCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi else { return 0 }
    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        Unmanaged<WebSocketClient>.fromOpaque(lws_context_user(lws_get_context(wsi))).takeUnretainedValue()
            .loop.drainInbox()
        return 0
    case LWS_CALLBACK_RAW_CONNECTED:
        connection(user)?.handleConnected(wsi)
        return 0
    case LWS_CALLBACK_RAW_RX:
        return connection(user)?.handleReceive(input, length) ?? -1
    case LWS_CALLBACK_RAW_WRITEABLE:
        return connection(user)?.handleWriteable() ?? -1
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        let reason = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection error"
        connection(user)?.finish(code: nil, reason: reason)
        return 0
    case LWS_CALLBACK_TIMER:
        return connection(user)?.handleSilenceCheck() ?? 0
    case LWS_CALLBACK_RAW_CLOSE:
        connection(user)?.finish(code: nil, reason: "")
        return 0
    default:
        return 0
    }
}

private func connection(_ user: UnsafeMutableRawPointer?) -> WebSocketClientConnection? {
    guard let user else { return nil }
    let connection = Unmanaged<WebSocketClientConnection>.fromOpaque(user).takeUnretainedValue()
    return connection.finished ? nil : connection
}

internal import CLibWebSockets
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// TLS for one outgoing connection, over memory buffers: the ciphertext the socket delivers goes in, the ciphertext
/// to send comes out, and the connection keeps writing to its socket itself (libwebsockets' raw sockets stop reading
/// while they hold unsent output, which a raw client must avoid).
final class TLSClientSession {
    /// What a step of the handshake settled.
    enum Progress: Equatable {
        case needMore
        case established
        case failed(String)
    }

    private let ssl: OpaquePointer
    /// Ciphertext from the socket, read by OpenSSL (owned by `ssl`).
    private let incoming: OpaquePointer
    /// Ciphertext OpenSSL produced, to send (owned by `ssl`).
    private let outgoing: OpaquePointer
    private let host: String
    /// The handshake finished and the peer's certificate was verified.
    private(set) var isEstablished = false

    /// A session that verifies the server's certificate for `host` (a name, or an IP address).
    init(context: TLSClientContext, host: String) throws(TransportError) {
        guard let ssl = SSL_new(context.context), let incoming = BIO_new(BIO_s_mem()),
            let outgoing = BIO_new(BIO_s_mem())
        else { throw .tlsSetupFailed("OpenSSL cannot create a session") }
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
        self.host = host
        SSL_set_bio(ssl, incoming, outgoing)
        SSL_set_connect_state(ssl)
        var address = in6_addr()
        let isAddress = inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
        if isAddress {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            _ = CLibWebSockets_SSL_set_server_name(ssl, host)
            SSL_set1_host(ssl, host)
        }
    }

    deinit { SSL_free(ssl) }

    /// Runs the handshake as far as the ciphertext received so far allows.
    func handshake() -> Progress {
        guard !isEstablished else { return .established }
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isEstablished = true
            return .established
        }
        let error = SSL_get_error(ssl, result)
        if error == CLibWebSockets_SSL_ERROR_WANT_READ || error == CLibWebSockets_SSL_ERROR_WANT_WRITE {
            return .needMore
        }
        let verification = SSL_get_verify_result(ssl)
        if verification != X509_V_OK {
            let reason = String(cString: X509_verify_cert_error_string(verification))
            return .failed(
                "the TLS certificate of \(host) is not trusted (\(reason)); for a certificate of your own, "
                    + "trust it with SSL_CERT_FILE=FILE or the client's trusted-certificates option")
        }
        return .failed("the TLS handshake with \(host) failed: \(Self.lastError())")
    }

    /// Hands ciphertext read from the socket to OpenSSL.
    func receive(_ ciphertext: UnsafeRawBufferPointer) {
        guard let base = ciphertext.baseAddress, ciphertext.count > 0 else { return }
        _ = BIO_write(incoming, base, Int32(ciphertext.count))
    }

    /// Decrypts what has arrived, calling `body` with each piece of plaintext until it returns false. Returns nil,
    /// or why the connection must end (the peer closed TLS, or broke it).
    func readPlaintext(_ body: (UnsafeRawBufferPointer) -> Bool) -> String? {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                let proceed = buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<Int(count)])) }
                if !proceed { return nil }
                continue
            }
            let error = SSL_get_error(ssl, count)
            if error == CLibWebSockets_SSL_ERROR_WANT_READ || error == CLibWebSockets_SSL_ERROR_WANT_WRITE {
                return nil
            }
            if error == CLibWebSockets_SSL_ERROR_ZERO_RETURN { return "the server closed the TLS session" }
            return "TLS failed: \(Self.lastError())"
        }
    }

    /// Encrypts up to `count` bytes at `plaintext`; returns how many it took (all, once established).
    func write(_ plaintext: UnsafeRawPointer, count: Int) -> Int {
        guard isEstablished, count > 0 else { return 0 }
        let written = SSL_write(ssl, plaintext, Int32(clamping: count))
        return written > 0 ? Int(written) : 0
    }

    /// Whether OpenSSL has ciphertext to send (handshake messages, alerts).
    var hasCiphertext: Bool { BIO_ctrl_pending(outgoing) > 0 }

    /// Moves the ciphertext waiting to be sent to the end of `buffer`.
    func takeCiphertext(into buffer: inout OutboundBuffer) {
        while true {
            let pending = Int(BIO_ctrl_pending(outgoing))
            guard pending > 0 else { return }
            let target = buffer.appendUninitialized(pending)
            let read = Int(BIO_read(outgoing, target, Int32(pending)))
            if read < pending { buffer.removeLast(pending - max(0, read)) }
            if read <= 0 { return }
        }
    }

    private static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no further detail" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

@available(*, unavailable)
extension TLSClientSession: Sendable {}

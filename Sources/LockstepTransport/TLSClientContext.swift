internal import CLibWebSockets

/// The OpenSSL settings every `wss://` connection of one `WebSocketClient` shares: peers are verified against the
/// system's trusted certificates (OpenSSL reads `SSL_CERT_FILE` and `SSL_CERT_DIR`, so a test can trust its own
/// self-signed certificate with `SSL_CERT_FILE=cert.pem`) and, when given, the certificates of one more PEM file.
final class TLSClientContext {
    /// The `SSL_CTX`.
    let context: OpaquePointer

    init(trustedCertificatesFile: String?) throws(TransportError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw .tlsSetupFailed("OpenSSL cannot create a client context")
        }
        SSL_CTX_set_verify(context, CLibWebSockets_SSL_VERIFY_PEER, nil)
        SSL_CTX_set_default_verify_paths(context)
        if let file = trustedCertificatesFile, SSL_CTX_load_verify_locations(context, file, nil) != 1 {
            SSL_CTX_free(context)
            throw .tlsSetupFailed("cannot load trusted certificates from \(file): give a readable PEM file")
        }
        self.context = context
    }

    deinit { SSL_CTX_free(context) }
}

@available(*, unavailable)
extension TLSClientContext: Sendable {}

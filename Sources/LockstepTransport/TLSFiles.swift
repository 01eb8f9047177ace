/// A PEM certificate (chain) and its private key: a server given them serves TLS only, `wss://` and `https://`.
public struct TLSFiles: Sendable, Equatable {
    /// The certificate, followed by any intermediate certificates, in PEM.
    public var certificatePath: String
    /// The certificate's private key, in PEM, unencrypted.
    public var privateKeyPath: String

    public init(certificatePath: String, privateKeyPath: String) {
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
    }
}

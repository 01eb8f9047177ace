import Foundation

/// A self-signed certificate for `localhost` and `127.0.0.1`, made by the `openssl` command in a new directory, for
/// servers under test to serve TLS with and clients to trust (it is its own authority).
public struct TestCertificate: Sendable {
    /// The directory holding both files; the caller removes it.
    public let directory: String
    /// The certificate, PEM.
    public var certificatePath: String { directory + "/cert.pem" }
    /// Its unencrypted private key, PEM.
    public var keyPath: String { directory + "/key.pem" }

    /// Runs `openssl req` off the task pool; throws when it fails.
    public static func make() async throws -> TestCertificate {
        let directory = NSTemporaryDirectory() + "lockstep-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificate = TestCertificate(directory: directory)
        let arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", certificate.keyPath, "-out", certificate.certificatePath,
        ]
        let status = try await offThePool {
            try ChildProcess(executable: "/usr/bin/openssl", arguments: arguments).waitForExit()
        }
        guard status == 0, FileManager.default.fileExists(atPath: certificate.certificatePath) else {
            throw ChildProcessError.failed("openssl req exited with \(status)")
        }
        return certificate
    }
}

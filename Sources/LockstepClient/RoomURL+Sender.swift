import Foundation
import LockstepCore
import LockstepJSON

/// Who the server will take this client's requests to be, as far as the client can tell before it asks.
extension RoomURL {
    /// The sender of this client's requests: its display name and session as given, and the subject and role its
    /// token claims (read, not verified: only the server can). `client` is the id the server gave it, once known.
    func sender(client: String?, name: String?, session: String) -> Sender {
        let claims = query.first { $0.0 == "token" }.flatMap { Self.claims(ofToken: $0.1) }
        return Sender(
            client: client ?? "", name: name, session: session, subject: claims?["sub"]?.stringValue,
            role: claims?["role"]?.stringValue)
    }

    /// The claims of a JWT: its middle part, base64url-decoded JSON; nil for anything else.
    static func claims(ofToken token: String) -> JSON? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let json = try? JSON(parsing: Array(data)), case .object = json
        else { return nil }
        return json
    }
}

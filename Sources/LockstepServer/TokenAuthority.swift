import FoundationEssentials
import JWTKit

/// Issues and verifies HS256 access tokens (JWT) for one shared secret.
///
/// Verification is synchronous, so the server decides on the loop thread, in the same callback
/// that opens a connection, before the client joins its room or sees any state. jwt-kit's key
/// collection is an actor, so the HMAC algorithm is taken out of it once, when the authority is
/// made, and used directly from then on.
///
/// ```swift
/// let tokens = try await TokenAuthority(secret: Array("32 or more bytes of secret........".utf8))
/// let token = try await tokens.issue(room: "demo", role: .write, lifetime: .seconds(3600))
/// configuration.tokens = tokens
/// ```
public struct TokenAuthority: Sendable {
    /// HS256 with a shorter key is weaker than its hash, and jwt-kit asserts on it in debug builds.
    public static let minimumSecretBytes = 32
    /// Longer tokens are refused unread; a real one is a few hundred bytes.
    static let maximumTokenBytes = 4_096

    private let keys: JWTKeyCollection
    private let algorithm: any JWTAlgorithm
    private let parser = DefaultJWTParser()

    /// Fails with ``AccessError/weakSecret(bytes:)`` for a secret under ``minimumSecretBytes``.
    public init(secret: some Collection<UInt8>) async throws(AccessError) {
        guard secret.count >= Self.minimumSecretBytes else { throw .weakSecret(bytes: secret.count) }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Array(secret)), digestAlgorithm: .sha256)
        do {
            algorithm = try await keys.getKey()
        } catch {
            throw .signingFailed("\(error)")
        }
        self.keys = keys
    }

    /// A token for `room` (a name or `*`) and `role`, valid for `lifetime` from now, issued to `subject` (its `sub`:
    /// who the holder is in every `cause`, and to reducers).
    public func issue(
        room: String, role: AccessRole, lifetime: Duration, subject: String? = nil
    ) async throws(AccessError) -> String {
        guard room == "*" || RoomName(room) != nil else {
            throw .malformedToken("the room must be 1 to 128 characters of [A-Za-z0-9._-], or *")
        }
        return try await sign(room: room, role: role.rawValue, lifetime: lifetime, subject: subject)
    }

    /// Signs whatever claims it is given, valid or not, so tests can make the tokens a server must refuse.
    func sign(
        room: String?, role: String?, lifetime: Duration?, subject: String? = nil
    ) async throws(AccessError) -> String {
        let exp = lifetime.map { lifetime in
            ExpirationClaim(
                value: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + lifetime.seconds).rounded(.down)))
        }
        do {
            return try await keys.sign(TokenClaims(room: room, role: role, sub: subject, exp: exp))
        } catch {
            throw .signingFailed("\(error)")
        }
    }

    /// Checks the signature, the algorithm and every claim; returns what the token allows.
    public func verify(_ token: String) throws(AccessError) -> AccessGrant {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty else { throw .missingToken }
        guard bytes.count <= Self.maximumTokenBytes else {
            throw .malformedToken("over \(Self.maximumTokenBytes) bytes")
        }
        let parsed: (header: JWTHeader, payload: TokenClaims, signature: Data)
        do {
            parsed = try parser.parse(bytes, as: TokenClaims.self)
        } catch {
            throw .malformedToken("expected three base64url parts: header.claims.signature")
        }
        guard parsed.header.alg == "HS256" else {
            throw .malformedToken("alg must be HS256, not \(parsed.header.alg ?? "missing")")
        }
        let signingInput = bytes[..<(bytes.lastIndex(of: UInt8(ascii: ".")) ?? bytes.endIndex)]
        guard (try? algorithm.verify(parsed.signature, signs: signingInput)) == true else { throw .badSignature }

        let claims = parsed.payload
        guard let exp = claims.exp else { throw .malformedToken("the exp claim is required") }
        guard Date() < exp.value else { throw .expired }
        guard let room = claims.room, room == "*" || RoomName(room) != nil else {
            throw .malformedToken("the room claim must be a room name or *")
        }
        guard let roleName = claims.role, let role = AccessRole(rawValue: roleName) else {
            throw .malformedToken("the role claim must be read, write or admin, not \(claims.role ?? "missing")")
        }
        return AccessGrant(room: room, role: role, subject: claims.sub)
    }

    /// Verifies `token` and checks it covers `room`; a nil token is ``AccessError/missingToken``.
    public func authorize(_ token: String?, room: String) throws(AccessError) -> AccessGrant {
        guard let token else { throw .missingToken }
        let grant = try verify(token)
        guard grant.covers(room: room) else { throw .otherRoom(granted: grant.room, requested: room) }
        return grant
    }

    /// The token of an `Authorization: Bearer TOKEN` header value, or nil for any other scheme.
    public static func bearerToken(in authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingSpaces()
        return token.isEmpty ? nil : token
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

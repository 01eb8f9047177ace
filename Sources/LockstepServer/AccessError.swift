/// Why a request was refused; `message` is sent to the client, so it names the fix and never the secret.
public enum AccessError: Error, Equatable, Sendable {
    /// No `token=` query parameter and no `Authorization: Bearer` header.
    case missingToken
    /// Not three base64url parts, not HS256, or claims missing or of the wrong kind (`role` unknown, no `exp`).
    case malformedToken(String)
    /// The signature does not match this server's secret.
    case badSignature
    /// `exp` is in the past.
    case expired
    /// The token names another room.
    case otherRoom(granted: String, requested: String)
    /// The secret is too short for HS256.
    case weakSecret(bytes: Int)
    /// jwt-kit could not sign (not expected with an HMAC key).
    case signingFailed(String)
    /// Private parts of rooms need to know who each client is: tokens are required with them (`--private`).
    case privatePartsWithoutTokens
    /// The same, for the private parts an app declares itself.
    case appPrivatePartsWithoutTokens(app: String)

    /// The wire error code: `unauthorized` for every token problem.
    public var code: String { "unauthorized" }

    /// What went wrong and how to fix it, sent to the client as the error's `message`.
    public var message: String {
        switch self {
        case .missingToken:
            "a token is required: add token=JWT to the URL or send Authorization: Bearer JWT"
        case .malformedToken(let reason):
            "the token is not a valid Lockstep token: \(reason)"
        case .badSignature:
            "the token's signature does not match this server's secret"
        case .expired:
            "the token has expired; ask for a new one"
        case .otherRoom(let granted, let requested):
            "the token is for room '\(granted)', not '\(requested)'"
        case .weakSecret(let bytes):
            "the auth secret has \(bytes) bytes; HS256 needs at least \(TokenAuthority.minimumSecretBytes)"
                + " (generate one with: head -c 32 /dev/urandom | base64)"
        case .signingFailed(let reason):
            "cannot sign a token: \(reason)"
        case .privatePartsWithoutTokens:
            "private parts (--private) need tokens to know whose they are: give --auth-secret-file (or --auth-secret)"
        case .appPrivatePartsWithoutTokens(let app):
            "the app \(app) keeps private parts of its rooms, which need tokens to know whose they are: give "
                + "--auth-secret-file (or --auth-secret)"
        }
    }
}

extension AccessError: CustomStringConvertible {
    public var description: String { message }
}

import FoundationEssentials
import JWTKit

/// The claims of a Lockstep access token.
///
/// Every field is optional so a token with a missing or wrong claim still parses, and is then
/// refused with a message that names the claim rather than a decoder's error.
struct TokenClaims: JWTPayload {
    /// A room name or `*`.
    var room: String?
    /// `read` or `write`; kept as text so an unknown role is reported as such.
    var role: String?
    /// Who the token was issued to: in every `cause` (`sub`) and the reducer's context.
    var sub: String?
    /// Required: a token that never expires cannot be taken back.
    var exp: ExpirationClaim?

    /// Used only if the claims are ever verified through a `JWTKeyCollection`; the server checks them
    /// synchronously in ``TokenAuthority/verify(_:)``.
    func verify(using algorithm: some JWTAlgorithm) async throws {
        guard let exp else { throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "no exp") }
        try exp.verifyNotExpired()
    }
}

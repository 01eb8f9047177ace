/// One more veth pair between this namespace and a ``NetworkNamespace``, on a /24 of its own: a second path into the
/// namespace (to a database, say) that a test cuts while the first one keeps carrying the clients.
public struct NamespaceLink: Sendable {
    /// The host side of the pair, in this namespace.
    public let hostInterface: String
    /// The other side, inside the namespace.
    public let innerInterface: String
    /// This side's address: what a server inside the namespace reaches through this link only.
    public let hostAddress: String
    /// The inner side's address.
    public let innerAddress: String
}

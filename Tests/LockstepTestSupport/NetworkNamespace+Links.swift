#if canImport(Glibc)
import Glibc
#endif

extension NetworkNamespace {
    /// Adds a second veth pair into the namespace, on a /24 apart from every slot's first pair; ``remove()`` deletes
    /// it with the namespace.
    public func addLink() throws -> NamespaceLink {
        let tag = String(name.dropFirst("lockstep".count))
        let subnet = "10.\(150 - 100 * slot + Int(getpid()) % 50).\(Int(getpid() / 50) % 250)"
        let link = NamespaceLink(
            hostInterface: "lsd\(tag)", innerInterface: "lsi\(tag)", hostAddress: "\(subnet).1",
            innerAddress: "\(subnet).2")
        // A pair left by a killed earlier run of the same id goes first.
        Self.run("ip", ["link", "del", link.hostInterface])
        let steps: [[String]] = [
            ["link", "add", link.hostInterface, "type", "veth", "peer", "name", link.innerInterface],
            ["link", "set", link.innerInterface, "netns", name],
            ["addr", "add", "\(link.hostAddress)/24", "dev", link.hostInterface],
            ["link", "set", link.hostInterface, "up"],
            ["netns", "exec", name, "ip", "addr", "add", "\(link.innerAddress)/24", "dev", link.innerInterface],
            ["netns", "exec", name, "ip", "link", "set", link.innerInterface, "up"],
        ]
        for step in steps where Self.run("ip", step) != 0 {
            Self.run("ip", ["link", "del", link.hostInterface])
            throw NetworkNamespaceError.setupFailed("ip " + step.joined(separator: " "))
        }
        return link
    }

    /// Takes the host side of `link` down or up; the namespace's other links stay as they are.
    public func setLink(_ link: NamespaceLink, up: Bool) {
        Self.run("ip", ["link", "set", link.hostInterface, up ? "up" : "down"])
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A network namespace joined to this one by a veth pair: a real network path (its own interfaces, routes and
/// queueing discipline) to a server started inside it, which a test can slow, make lossy, or cut.
///
/// Needs root and iproute2. ``remove()`` deletes the namespace and the pair; call it from a `defer`.
public final class NetworkNamespace: Sendable {
    public let name: String
    /// The host side of the pair, in this namespace.
    public let hostInterface: String
    /// The server's side, inside the namespace.
    public let innerInterface: String
    /// This side's address.
    public let hostAddress: String
    /// The server's address, inside the namespace.
    public let innerAddress: String

    /// True when this process can create namespaces and veth pairs (root, iproute2, a kernel that allows it).
    public static let isAvailable: Bool = {
        guard tool("ip") != nil, getuid() == 0 else { return false }
        let probe = "lsprobe\(getpid() % 100_000)"
        guard run("ip", ["netns", "add", probe]) == 0 else { return false }
        run("ip", ["netns", "del", probe])
        return true
    }()

    /// Which of this process's namespaces it is: tests that may run at the same time use different slots.
    let slot: Int

    /// Creates the namespace and the pair, with addresses on a /24 picked from this process's id and `slot` (0 or 1).
    public init(slot: Int = 0) throws {
        precondition((0...1).contains(slot), "a test process has two namespace slots")
        self.slot = slot
        let tag = "\(getpid() % 100_000)" + (slot == 0 ? "" : "s\(slot)")
        name = "lockstep\(tag)"
        hostInterface = "lsh\(tag)"
        innerInterface = "lsn\(tag)"
        let subnet = "10.\(200 - 100 * slot + Int(getpid()) % 50).\(Int(getpid() / 50) % 250)"
        hostAddress = "\(subnet).1"
        innerAddress = "\(subnet).2"
        // A namespace left by a killed earlier run of the same id goes first.
        remove()
        let steps: [[String]] = [
            ["netns", "add", name],
            ["link", "add", hostInterface, "type", "veth", "peer", "name", innerInterface],
            ["link", "set", innerInterface, "netns", name],
            ["addr", "add", "\(hostAddress)/24", "dev", hostInterface],
            ["link", "set", hostInterface, "up"],
            ["netns", "exec", name, "ip", "addr", "add", "\(innerAddress)/24", "dev", innerInterface],
            ["netns", "exec", name, "ip", "link", "set", innerInterface, "up"],
            ["netns", "exec", name, "ip", "link", "set", "lo", "up"],
        ]
        for step in steps where Self.run("ip", step) != 0 {
            remove()
            throw NetworkNamespaceError.setupFailed("ip " + step.joined(separator: " "))
        }
    }

    /// Adds `tc netem` delay and loss on both sides of the pair; false when the kernel has no netem.
    @discardableResult
    public func impair(delay: String, jitter: String, loss: String) -> Bool {
        let netem = ["qdisc", "add", "dev", "DEV", "root", "netem", "delay", delay, jitter, "loss", loss]
        guard Self.run("tc", netem.map { $0 == "DEV" ? hostInterface : $0 }) == 0 else { return false }
        return Self.run("ip", ["netns", "exec", name, "tc"] + netem.map { $0 == "DEV" ? innerInterface : $0 }) == 0
    }

    /// Takes the host side of the link down or up.
    public func setLink(up: Bool) {
        Self.run("ip", ["link", "set", hostInterface, up ? "up" : "down"])
    }

    /// Starts `executable` inside the namespace.
    public func spawn(_ executable: String, _ arguments: [String]) throws -> ChildProcess {
        guard let ip = Self.tool("ip") else { throw NetworkNamespaceError.setupFailed("no ip command") }
        return try ChildProcess(executable: ip, arguments: ["netns", "exec", name, executable] + arguments)
    }

    /// Deletes the namespace (and with it both ends of the pair); safe to call more than once.
    public func remove() {
        Self.run("ip", ["netns", "del", name])
        Self.run("ip", ["link", "del", hostInterface])
    }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        guard let path = Self.tool(tool), let child = try? ChildProcess(executable: path, arguments: arguments) else {
            return -1
        }
        _ = child.readToEnd()
        return child.waitForExit()
    }

    static func tool(_ name: String) -> String? {
        ["/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"].map { $0 + name }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
}

public enum NetworkNamespaceError: Error {
    case setupFailed(String)
}

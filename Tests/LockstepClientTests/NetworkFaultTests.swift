import Foundation
import Glibc
import LockstepClient
import LockstepJSON
import LockstepTestSupport
import Testing

/// Exactly-once over a real network path: the server runs in its own network namespace behind a veth pair, with
/// `tc netem` delay and loss when the kernel has netem, and the link goes down for three seconds while the server
/// is killed and restarted; three SDK clients keep sending through their outboxes all along.
///
/// About 10 s on its own; the limit leaves room for a loaded machine running every suite at once.
@Suite(.timeLimit(.minutes(4)))
struct NetworkFaultTests {
    /// A `lockstep serve` inside the namespace, on a fixed port (the namespace has its own), killable with -9.
    final class NamespacedServer: Sendable {
        let child: ChildProcess

        private init(child: ChildProcess) {
            self.child = child
        }

        /// Starts the server and waits until it serves, off the task pool (the waits block); a start that
        /// fails (the port still held by the killed server's closing connections) is tried again.
        static func start(in namespace: NetworkNamespace, data: String) async throws -> NamespacedServer {
            let arguments = [
                "serve", "--host", namespace.innerAddress, "--port", "8080", "--insecure", "--app", "counter",
                "--data", data, "--rate-limit", "0",
            ]
            let executable = try builtExecutable("lockstep")
            return try await offThePool {
                var output = ""
                for _ in 0..<20 {
                    let child = try namespace.spawn(executable, arguments)
                    output = ""
                    var chunk = [UInt8](repeating: 0, count: 4_096)
                    let deadline = Date().addingTimeInterval(10)
                    while Date() < deadline, !output.contains("/rooms/ROOM"),
                        let count = child.readChunk(into: &chunk, waitingAtMost: 100)
                    {
                        output += String(decoding: chunk[0..<count], as: UTF8.self)
                    }
                    if output.contains("/rooms/ROOM") { return NamespacedServer(child: child) }
                    child.send(SIGKILL)
                    child.waitForExit()
                    // A pause before trying the port again (off the task pool).
                    Thread.sleep(forTimeInterval: 0.25)
                }
                throw NetworkNamespaceError.setupFailed("the server did not start: \(output)")
            }
        }

        func kill9() {
            child.send(SIGKILL)
            child.waitForExit()
        }
    }

    @Test(.enabled(
        if: NetworkNamespace.isAvailable,
        "needs root and iproute2 to put the server in a network namespace (ip netns, veth); CI runs it as root"))
    func threeClientsThroughLossDelayAndAnOutageApplyEveryIncrementOnce() async throws {
        let namespace = try await offThePool { try NetworkNamespace() }
        defer { namespace.remove() }
        if try await !offThePool({ namespace.impair(delay: "15ms", jitter: "5ms", loss: "2%") }) {
            print("NetworkFaultTests: this kernel has no tc netem; the link runs without added delay and loss")
        }
        let directory = NSTemporaryDirectory() + "lockstep-fault-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await NamespacedServer.start(in: namespace, data: directory)
        var current = first
        defer { current.kill9() }

        let url = "ws://\(namespace.innerAddress):8080/rooms/fault"
        let retry = ReconnectPolicy(initialDelay: .milliseconds(50), maxDelay: .milliseconds(500))
        let clients = try (0..<3).map { try RoomClient(url: url, name: "p\($0)", reconnect: retry) }
        for client in clients { try await client.connect() }
        let recorders = clients.map { client in
            Task { await client.updates.reduce(into: [RoomUpdate]()) { $0.append($1) } }
        }

        let perClient = 1_000
        let workers = 20
        let sends = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for client in clients {
                    for _ in 0..<workers {
                        group.addTask {
                            for _ in 0..<(perClient / workers) { try await client.send(action: ["type": "increment"]) }
                            return perClient / workers
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
        }
        defer { sends.cancel() }

        // The outage begins once the clients are well under way: a tenth of the increments applied.
        try await waitUntil("the clients to be under way", within: 60) {
            await clients[0].version >= 3 * perClient / 10
        }
        try await offThePool { namespace.setLink(up: false) }
        // While the link is down the server dies and comes back: every connection is lost, and so is whatever the
        // server applied but had not yet written.
        try await offThePool { first.kill9() }
        current = try await NamespacedServer.start(in: namespace, data: directory)
        // The fault itself: the link stays down three seconds more, while the clients keep trying.
        try await Task.sleep(for: .seconds(3))
        try await offThePool { namespace.setLink(up: true) }

        let returned = try await within(120, "every send to return") { try await sends.value }
        #expect(returned == 3 * perClient)

        let observer = try RoomClient(url: url, name: "observer")
        try await observer.connect()
        let (serverVersion, serverState) = (await observer.version, await observer.state)
        await observer.close()
        #expect(serverState == ["count": .int(3 * perClient)])
        #expect(serverVersion == 3 * perClient)
        for client in clients {
            try await waitUntil("a mirror to reach the server's version", within: 30) {
                await client.version >= serverVersion
            }
            #expect(await client.state == serverState)
            #expect(await client.pendingCount == 0)
            await client.close()
        }
        for recorder in recorders {
            let seen = await recorder.value
            #expect(isContiguous(seen), "a mirror applied a patch that did not follow its version")
            #expect(seen.filter { $0.change == .status(.live) }.count >= 2, "the client reconnected")
        }
    }
}

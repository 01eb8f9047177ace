import Dispatch
import Foundation
import Glibc
import Synchronization

/// A TCP relay on loopback that holds every byte for `delay` before passing it on, both ways: a real slow network
/// path between a client and a server, without root.
///
/// Each direction of each connection has a reader thread and a serial queue that writes each chunk once it is due,
/// so order is kept and the delay does not add up under load.
public final class DelayRelay: Sendable {
    /// The port clients connect to.
    public let port: Int
    private let listener: Int32
    private let targetPort: Int
    private let delay: Duration
    private let sockets = Mutex<[Int32]>([])

    public init(targetPort: Int, delay: Duration) throws {
        self.targetPort = targetPort
        self.delay = delay
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw RawSocketError.failed("socket") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else { throw RawSocketError.failed("bind/listen") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard (try? RawSocket.connect(server, port: self.targetPort)) != nil else {
                    Glibc.close(client)
                    Glibc.close(server)
                    continue
                }
                self.sockets.withLock { $0 += [client, server] }
                let pair = Pair(client, server)
                self.pump(from: client, to: server, pair: pair, toClient: false)
                self.pump(from: server, to: client, pair: pair, toClient: true)
            }
        }
    }

    /// Both sockets of one relayed connection, closed once both directions have ended.
    private final class Pair: Sendable {
        let sockets: [Int32]
        private let open = Mutex(2)

        init(_ client: Int32, _ server: Int32) {
            sockets = [client, server]
        }

        /// One direction ended; the second closes both sockets.
        func finish(in relay: DelayRelay) {
            guard open.withLock({ $0 -= 1; return $0 == 0 }) else { return }
            // Forgotten first, so cutConnections never shuts down a number reused for another file.
            relay.sockets.withLock { list in list.removeAll { self.sockets.contains($0) } }
            for fd in sockets { Glibc.close(fd) }
        }
    }

    /// While holding, what the server sends waits here, in order, with the connection it goes to.
    private let held = Mutex<(on: Bool, chunks: [(destination: Int32, bytes: [UInt8], pair: Pair)])>((false, []))

    /// Holds everything the server sends from now on (clients hear nothing, however long), until `releaseReplies`.
    public func holdReplies() {
        held.withLock { $0.on = true }
    }

    /// Passes on what was held, in order, and stops holding.
    public func releaseReplies() {
        held.withLock { held in
            held.on = false
            for chunk in held.chunks { deliver(chunk.bytes, to: chunk.destination, pair: chunk.pair) }
            held.chunks.removeAll()
        }
    }

    /// Writes one chunk (an empty one ends the direction).
    private func deliver(_ bytes: [UInt8], to destination: Int32, pair: Pair) {
        if bytes.isEmpty {
            shutdown(destination, Int32(SHUT_WR))
            pair.finish(in: self)
        } else {
            _ = try? RawSocket.write(destination, bytes)
        }
    }

    private func pump(from source: Int32, to destination: Int32, pair: Pair, toClient: Bool) {
        let queue = DispatchQueue(label: "lockstep.relay")
        let delay = delay
        Thread.detachNewThread { [self] in
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(source, &chunk, chunk.count)
                let bytes = count > 0 ? Array(chunk[0..<count]) : []
                let due = DispatchTime.now() + .nanoseconds(Int(delay.components.seconds * 1_000_000_000
                    + delay.components.attoseconds / 1_000_000_000))
                queue.asyncAfter(deadline: due) {
                    guard toClient else { return self.deliver(bytes, to: destination, pair: pair) }
                    // Under the lock, so a release writes what it held before anything newer.
                    self.held.withLock { held in
                        if held.on {
                            held.chunks.append((destination, bytes, pair))
                        } else {
                            self.deliver(bytes, to: destination, pair: pair)
                        }
                    }
                }
                if count <= 0 { return }
            }
        }
    }

    /// Cuts every connection at once, as a dropped network path would (new connections still go through).
    public func cutConnections() {
        sockets.withLock { open in
            for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Stops accepting and cuts every connection.
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        cutConnections()
    }
}

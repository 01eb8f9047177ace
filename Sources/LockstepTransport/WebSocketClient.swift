internal import CLibWebSockets
import Synchronization
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// One libwebsockets client context and its `ServiceLoop`, shared by many outgoing connections (tests, the SDK,
/// a load generator with thousands of sockets).
// @unchecked Sendable: `loop`, `context` and `maxMessageBytes` are never written after init; `shutdownRequested`
// is a Mutex; `connections` and `nextID` are touched only on the loop thread (or in init/deinit).
public final class WebSocketClient: @unchecked Sendable {
    /// The thread that services every connection of this client.
    public let loop: ServiceLoop
    /// Larger inbound messages are reported as `.tooLarge` and never buffered.
    public let maxMessageBytes: Int

    private var context: OpaquePointer?
    var connections: [UInt64: WebSocketClientConnection] = [:]
    var nextID: UInt64 = 1
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolName: UnsafeMutablePointer<CChar>
    private let shutdownRequested = Mutex(false)
    /// A PEM file whose certificates `wss://` servers may present besides the system's trusted ones.
    private let trustedCertificatesFile: String?
    /// Made on the first `wss://` connection. Loop thread only.
    private var tlsContext: TLSClientContext?
    /// Whether connections offer permessage-deflate.
    public let compression: Bool
    /// Compresses what this client's connections send once agreed; made on first use. Loop thread only.
    private(set) lazy var deflater = MessageDeflater()
    /// Connecting and upgrading each have this long.
    static let handshakeTimeoutSeconds: Int32 = 10
    /// How long an open connection may receive nothing before it is taken for dead (see `init`).
    public let silenceLimit: Duration

    /// Creates the context and starts its loop thread. `receiveBufferBytes` is the most one read takes from a
    /// socket. `wss://` servers must present a certificate the system trusts (OpenSSL also reads `SSL_CERT_FILE`)
    /// or one from `trustedCertificatesFile` (PEM), such as a test's self-signed certificate. With `compression`,
    /// connections offer permessage-deflate: compressed messages from the server are inflated, and messages of 128
    /// bytes or more are sent compressed, each on its own. A connection that receives nothing for a third of
    /// `silenceLimit` sends a ping, and one that receives nothing for all of it is closed: a server gone without a
    /// word (its host down, a link cut, a NAT that forgot the connection) is noticed, not waited for forever.
    /// `eventLoop` is how the loop waits for its sockets; on
    /// `epoll`, each pass first waits `collectInterval` for more of them to become ready, which saves wake-ups when
    /// one loop holds thousands of sockets and adds at most that much latency.
    public init(
        maxMessageBytes: Int = 64 << 20, receiveBufferBytes: Int = 4096, trustedCertificatesFile: String? = nil,
        compression: Bool = false, eventLoop: EventLoopBackend = .poll, collectInterval: Duration = .zero,
        silenceLimit: Duration = .seconds(30)
    ) throws(TransportError) {
        ResourceLimits.raiseFileDescriptorLimit()
        self.silenceLimit = max(silenceLimit, .milliseconds(30))
        self.compression = compression
        self.trustedCertificatesFile = trustedCertificatesFile
        LibWebSocketsLog.install(warnings: false)
        self.maxMessageBytes = maxMessageBytes
        loop = ServiceLoop(backend: eventLoop, collectInterval: collectInterval)
        protocolName = strdup("lockstep")!
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = clientCallback

        var info = lws_context_creation_info()
        info.port = CLibWebSockets_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.connect_timeout_secs = UInt32(Self.handshakeTimeoutSeconds)
        info.pt_serv_buf_size = UInt32(max(4096, receiveBufferBytes))
        loop.configure(&info)
        guard let context = lws_create_context(&info) else { throw .contextCreationFailed("client context") }
        self.context = context
        loop.start(context: context, owner: self, onWake: nil, onDestroyed: { [unowned self] in
            self.context = nil
            for connection in Array(self.connections.values) {
                connection.finish(code: nil, reason: "client shut down")
            }
        })
    }

    deinit {
        protocols.deinitialize(count: 2)
        protocols.deallocate()
        free(protocolName)
    }

    /// Opens a connection; the outcome arrives on `delegate` (on the loop thread). `compression` overrides the
    /// client's choice of offering permessage-deflate for this connection. With `sourceAddress` (an IP address of
    /// this machine, such as 127.0.0.2) the socket is bound to it before connecting: each source address has its
    /// own range of ephemeral ports. Any thread.
    public func connect(
        to url: String, headers: [String: String] = [:], compression: Bool? = nil, sourceAddress: String? = nil,
        delegate: sending any WebSocketClientDelegate
    ) {
        let transfer = UncheckedTransfer(delegate)
        let offer = compression ?? self.compression
        if loop.isCurrent {
            connectOnLoop(
                url: url, headers: headers, offerDeflate: offer, sourceAddress: sourceAddress,
                delegate: transfer.value)
        } else {
            loop.execute { [self] in
                self.connectOnLoop(
                    url: url, headers: headers, offerDeflate: offer, sourceAddress: sourceAddress,
                    delegate: transfer.value)
            }
        }
    }

    /// Ends every connection (each reports `clientDidClose`) and the loop thread, waiting for it unless called on
    /// it. Any thread; idempotent.
    public func shutdown() {
        let first = shutdownRequested.withLock { requested in
            defer { requested = true }
            return !requested
        }
        if first { loop.requestStop() }
        loop.join()
    }

    private func connectOnLoop(
        url: String, headers: [String: String], offerDeflate: Bool, sourceAddress: String?,
        delegate: any WebSocketClientDelegate
    ) {
        let parsed: WebSocketURL
        do {
            parsed = try WebSocketURL(url)
        } catch {
            reportFailure(to: delegate, reason: "invalid URL: \(url)")
            return
        }
        guard let context else {
            reportFailure(to: delegate, reason: "client shut down")
            return
        }
        var tls: TLSClientSession?
        if parsed.isSecure {
            do {
                if tlsContext == nil {
                    tlsContext = try TLSClientContext(trustedCertificatesFile: trustedCertificatesFile)
                }
                tls = try TLSClientSession(context: tlsContext!, host: parsed.host)
            } catch {
                reportFailure(to: delegate, reason: error.message)
                return
            }
        }
        var key = [UInt8](repeating: 0, count: 16)
        lws_get_random(context, &key, key.count)
        let handshake = ClientHandshake(
            host: parsed.hostHeader, path: parsed.path, headers: headers.map { ($0.key, $0.value) }, key: key,
            offerDeflate: offerDeflate)
        let connection = WebSocketClientConnection(
            id: nextID, client: self, delegate: delegate, handshake: handshake, tls: tls)
        nextID += 1
        connections[connection.id] = connection
        let address = strdup(parsed.host)!
        let method = strdup("RAW")!
        let source = sourceAddress.map { strdup($0)! }
        connection.cStrings = [address, method] + (source.map { [$0] } ?? [])
        var info = lws_client_connect_info()
        info.context = context
        info.iface = UnsafePointer(source)
        info.address = UnsafePointer(address)
        info.port = Int32(parsed.port)
        // A raw socket: the handshake and framing are the connection's own.
        info.method = UnsafePointer(method)
        info.userdata = Unmanaged.passUnretained(connection).toOpaque()
        let wsi = lws_client_connect_via_info(&info)
        if wsi == nil {
            connection.finish(code: nil, reason: "connect to \(url) failed")
        } else if !connection.finished, connection.wsi == nil {
            connection.wsi = wsi
        }
    }

    /// A connection that never got a socket still reports its end, once, like any other.
    private func reportFailure(to delegate: any WebSocketClientDelegate, reason: String) {
        let connection = WebSocketClientConnection(
            id: nextID, client: self, delegate: delegate, handshake: nil, tls: nil)
        nextID += 1
        connection.finish(code: nil, reason: reason)
    }
}

/// Moves a value that is provably not shared (a `sending` parameter) into a `@Sendable` closure.
// @unchecked Sendable: built only from a `sending` value and used by exactly one closure on the loop thread.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

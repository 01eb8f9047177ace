internal import CLibWebSockets
import Synchronization
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A WebSocket (and plain HTTP) server on one libwebsockets context, serviced by its own `ServiceLoop` thread.
// @unchecked Sendable: `loop`, `port` and `configuration` are never written after init; `shutdownRequested` is a Mutex;
// everything else (`delegate`, `connections`, `nextID`, the buffers) is touched only on the loop thread, or in
// init/deinit when no loop thread is running.
public final class WebSocketServer: @unchecked Sendable {
    /// Listening and resource settings.
    public struct Configuration: Sendable {
        /// The address to listen on; "0.0.0.0" or "" for all IPv4 interfaces, "::" for all interfaces.
        public var host: String
        /// The port to listen on; 0 picks any free port (read it back from `WebSocketServer.port`).
        public var port: Int
        /// Larger inbound messages are reported as `.tooLarge` and never buffered.
        public var maxMessageBytes: Int
        /// Bytes lws reads per receive callback; lws allocates this per connection, so it drives idle memory.
        public var receiveBufferBytes: Int
        /// Upper bound of queued frames handed to one write; a bigger frame is written alone.
        public var coalesceBytes: Int
        /// Whether libwebsockets logs warnings too (errors are always logged).
        public var logWarnings: Bool
        /// Seconds a new connection has to send its whole request (WebSocket handshake or HTTP) before lws
        /// closes it, and an HTTP request's body has after its head (`BodyWait`); bounds slowloris clients. lws's
        /// `timeout_secs` and `timeout_secs_ah_idle`.
        public var handshakeTimeoutSeconds: Int
        /// Seconds an HTTP answer may wait for its producer (a deferred response, or a streamed body that answered
        /// `.later`) before lws closes the connection; bounds answers that never come.
        public var responseWaitTimeoutSeconds: Int
        /// With a certificate and key the port speaks TLS only: `wss://` and `https://`; nil serves plain text.
        public var tls: TLSFiles?
        /// Whether clients offering permessage-deflate (RFC 7692) get it; off, every client gets plain frames.
        public var compression = true
        /// Data frames whose payload is shorter go to deflate clients uncompressed.
        public var compressionMinimumBytes = 128
        /// How the loop waits for sockets: `poll` suits busy fan-out, `epoll` many mostly idle connections.
        public var eventLoop = EventLoopBackend.poll
        /// After a pass of the loop that only read (sent and asked to send nothing), how long since it began the next
        /// one waits for more input to gather; work from other threads ends the wait. Zero: none. See `InputGathering`.
        public var gatherInterval = Duration.zero
        /// Seconds after which a WebSocket client that has not answered a ping is pinged again; one that answers
        /// none within `pingGraceSeconds` more is closed, so a client gone without a word (its network lost, its
        /// device asleep) leaves presence and frees its socket. HTTP connections are not pinged.
        public var pingIntervalSeconds = 300
        /// Seconds a pinged client has to answer.
        public var pingGraceSeconds = 10

        /// Builds a configuration; the defaults suit a local development server.
        public init(
            host: String = "127.0.0.1", port: Int = 8080, maxMessageBytes: Int = 1 << 20,
            receiveBufferBytes: Int = 4096, coalesceBytes: Int = 256 * 1024, logWarnings: Bool = false,
            handshakeTimeoutSeconds: Int = 10, responseWaitTimeoutSeconds: Int = 30
        ) {
            self.host = host
            self.port = port
            self.maxMessageBytes = maxMessageBytes
            self.receiveBufferBytes = receiveBufferBytes
            self.coalesceBytes = coalesceBytes
            self.logWarnings = logWarnings
            self.handshakeTimeoutSeconds = handshakeTimeoutSeconds
            self.responseWaitTimeoutSeconds = responseWaitTimeoutSeconds
        }
    }

    /// The thread that services this server; isolate an actor to it to touch connections directly.
    public let loop: ServiceLoop
    /// The bound port (useful with `port: 0`). Written only in init.
    public private(set) var port = 0
    /// The settings this server runs with.
    public let configuration: Configuration
    /// The descriptor limit the server found and raised at start. Written only in init.
    public private(set) var descriptorLimit = DescriptorLimit(softBefore: 0, soft: 0, hard: 0, inUse: 0)

    let delegate: any WebSocketServerDelegate
    var connections: [UInt64: WebSocketConnection] = [:]
    var nextID: UInt64 = 1
    /// Streams that had frames appended in this pass of the loop; their followers are woken once, at its end.
    private var streamsToWake: [BroadcastStream] = []
    /// HTTP answers that came in this pass, written at its end (`answerReady`).
    private var answersReady: [HTTPPromise] = []
    /// HTTP connections whose request announced a body in this pass, for `armBodyDeadlines` at its end; one is
    /// removed when libwebsockets destroys it.
    var bodiesAwaited: Set<OpaquePointer> = []
    /// HTTP bodies resumed in this pass, flushed with the stream wakes (`HTTPStreamWriter.flush`).
    private var bodiesToFlush: [HTTPBodyStream] = []
    /// Whether this pass of the loop read a message or a request, and whether it sent or asked to send anything
    /// (`send`, `requestWritable`): a pass that only read lets input gather before the next one (`InputGathering`).
    var receivedInPass = false
    private var sentInPass = false
    /// Passes of the loop so far.
    private(set) var pass = 0
    /// Rounds of reads so far (each pass's, and each read again within a pass), for telling one round's from the next.
    private(set) var readRound = 0
    /// Connections whose reads in this round came to half a receive buffer while the kernel held more of their input.
    var inputWaiting: [WebSocketConnection] = []
    /// Consecutive passes whose stream wakes were put off because input was waiting.
    private var deferredWakes = 0
    /// At most this many passes in a row put off their stream wakes.
    static let maxDeferredWakes = 16
    /// A connection's waiting input is read up to this many bytes a pass, in reads of `--receive-buffer`: a fast
    /// writer's actions then take as few passes (each with its writes to every follower) with a small buffer, which
    /// every connection holds, as with a large one.
    static let inputBytesPerPass = 4_096
    /// `LWS_PRE` + `coalesceBytes`: the one buffer every coalesced write and HTTP body chunk is built in.
    let writeBuffer: UnsafeMutableRawPointer
    private let protocols: UnsafeMutablePointer<lws_protocols>
    /// The vhost's ping policy (`pingIntervalSeconds`); libwebsockets keeps the pointer for the context's life.
    private let idlePolicy: UnsafeMutablePointer<lws_retry_bo_t>
    private let cStrings: [UnsafeMutablePointer<CChar>]
    private let shutdownRequested = Mutex(false)
    /// Compresses frames for deflate clients, each once (see `OutboundFrame.deflated`); made on first use.
    private var deflater: MessageDeflater?
    /// Lets the server refuse waiting connections when the process has no descriptor left. Loop thread only.
    private var reserve: DescriptorReserve?

    /// Number of open WebSocket connections. Loop thread only.
    public var connectionCount: Int { connections.count }

    /// Binds the listening socket and starts the loop thread.
    public init(configuration: Configuration = Configuration(), delegate: any WebSocketServerDelegate)
        throws(TransportError)
    {
        if let tls = configuration.tls {
            for path in [tls.certificatePath, tls.privateKeyPath] where access(path, R_OK) != 0 {
                throw .tlsSetupFailed("cannot read \(path): \(String(cString: strerror(errno)))")
            }
        }
        let limits = ResourceLimits.raiseFileDescriptorLimit()
        try ListenProbe.check(host: configuration.host, port: configuration.port)
        LibWebSocketsLog.install(warnings: configuration.logWarnings)
        self.configuration = configuration
        self.delegate = delegate
        loop = ServiceLoop(backend: configuration.eventLoop, gatherInterval: configuration.gatherInterval)
        writeBuffer = .allocate(byteCount: CLibWebSockets_LWS_PRE + configuration.coalesceBytes, alignment: 16)
        idlePolicy = .allocate(capacity: 1)
        idlePolicy.initialize(to: lws_retry_bo_t())

        let name = strdup("lockstep")!
        let wildcard = ["", "0.0.0.0", "::", "*"].contains(configuration.host)
        let iface: UnsafeMutablePointer<CChar>? = wildcard ? nil : strdup(configuration.host)
        // HTTP/1.1 only: over HTTP/2 a WebSocket would not be a byte stream our pre-framed writes can go to.
        let tlsStrings = configuration.tls.map {
            [strdup($0.certificatePath)!, strdup($0.privateKeyPath)!, strdup("http/1.1")!]
        }
        cStrings = [name] + (iface.map { [$0] } ?? []) + (tlsStrings ?? [])
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = UnsafePointer(name)
        protocols[0].callback = serverCallback
        protocols[0].per_session_data_size = SessionSlot.allCases.count * MemoryLayout<UnsafeMutableRawPointer?>.size
        protocols[0].rx_buffer_size = configuration.receiveBufferBytes
        protocols[0].tx_packet_size = configuration.coalesceBytes

        var info = lws_context_creation_info()
        info.port = Int32(configuration.port)
        info.iface = UnsafePointer(iface)
        info.protocols = UnsafePointer(protocols)
        info.options = CLibWebSockets_server_options(
            configuration.host.contains(":") ? 0 : 1, configuration.tls == nil ? 0 : 1)
        if let tlsStrings {
            info.ssl_cert_filepath = UnsafePointer(tlsStrings[0])
            info.ssl_private_key_filepath = UnsafePointer(tlsStrings[1])
            info.alpn = UnsafePointer(tlsStrings[2])
        }
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.pt_serv_buf_size = 32 * 1024
        // Both bound the header phase: the first from accept, the second while a header table is held.
        let handshakeTimeout = UInt32(clamping: max(1, configuration.handshakeTimeoutSeconds))
        info.timeout_secs = handshakeTimeout
        info.timeout_secs_ah_idle = handshakeTimeout
        // permessage-deflate is negotiated through libwebsockets (so it accepts RSV1 frames) but done here: its own
        // extension would compress only what goes through lws_write's framing, never the pre-framed writes.
        info.extensions = configuration.compression ? CLibWebSockets_deflate_extensions() : nil
        idlePolicy.pointee.secs_since_valid_ping = UInt16(clamping: max(1, configuration.pingIntervalSeconds))
        idlePolicy.pointee.secs_since_valid_hangup = UInt16(
            clamping: max(1, configuration.pingIntervalSeconds) + max(1, configuration.pingGraceSeconds))
        info.retry_and_idle_policy = UnsafePointer(idlePolicy)
        loop.configure(&info)

        guard let context = lws_create_context(&info) else {
            if let tls = configuration.tls {
                throw .tlsSetupFailed(
                    "cannot listen on \(configuration.host):\(configuration.port) with certificate "
                        + "\(tls.certificatePath) and key \(tls.privateKeyPath): check both are PEM, that the key "
                        + "belongs to the certificate and is not encrypted, and that the port is free")
            }
            throw .contextCreationFailed("cannot listen on \(configuration.host):\(configuration.port)")
        }
        port = Int(lws_get_vhost_listen_port(lws_get_vhost_by_name(context, "default")))
        reserve = DescriptorReserve(port: port)
        descriptorLimit = DescriptorLimit(
            softBefore: limits.before, soft: limits.soft, hard: limits.hard,
            inUse: ResourceLimits.openDescriptors().count)
        loop.start(context: context, owner: self, onWake: { [unowned self] in
            self.delegate.loopDidWake()
        }, onTurnEnd: { [unowned self] in
            self.readWaitingInput()
            if !self.bodiesAwaited.isEmpty { armBodyDeadlines(self) }
            self.writeAnswers()
            self.wakeStreams()
            self.checkDescriptors()
            // Only read: nobody waits for an answer from it, and input left waiting is read on at once.
            defer { (self.receivedInPass, self.sentInPass) = (false, false) }
            return self.receivedInPass && !self.sentInPass && self.inputWaiting.isEmpty
        }, onDestroyed: { [unowned self] in
            for connection in Array(self.connections.values) { connection.handleClosed() }
        })
    }

    /// Hands `count` bytes at `bytes` to libwebsockets for `wsi`: every write of the server goes through here. Loop
    /// thread only.
    func send(
        _ wsi: OpaquePointer, _ bytes: UnsafeMutablePointer<UInt8>, _ count: Int, _ kind: lws_write_protocol
    ) -> Int32 {
        sentInPass = true
        return lws_write(wsi, bytes, count, kind)
    }

    /// Asks libwebsockets for a writeable callback for `wsi`: every such request of the server goes through here.
    /// Loop thread only.
    func requestWritable(_ wsi: OpaquePointer) {
        sentInPass = true
        lws_callback_on_writable(wsi)
    }

    /// The form of `frame` a deflate client receives, compressed once per frame. Loop thread only.
    func deflated(_ frame: OutboundFrame) -> OutboundFrame {
        let deflater = self.deflater ?? MessageDeflater()
        self.deflater = deflater
        return frame.deflated(by: deflater, minimumPayload: configuration.compressionMinimumBytes)
    }

    /// The permessage-deflate agreement for the handshake `wsi` is in, or nil when the client gets plain frames.
    func deflateAgreement(_ wsi: OpaquePointer) -> DeflateNegotiation? {
        guard configuration.compression, let offer = HeaderAccess.token(wsi, WSI_TOKEN_EXTENSIONS) else { return nil }
        return DeflateNegotiation(offer: offer)
    }

    /// Wakes `stream`'s followers once this pass of the loop ends, after every frame appended in it.
    func scheduleWake(_ stream: BroadcastStream) {
        streamsToWake.append(stream)
    }

    /// Writes `promise`'s answer once this pass of the loop ends, with every other answer that came in it.
    func scheduleAnswer(_ promise: HTTPPromise) {
        answersReady.append(promise)
    }

    /// Writes what `body` has once this pass of the loop ends, when the stream followers are woken.
    func scheduleFlush(_ body: HTTPBodyStream) {
        bodiesToFlush.append(body)
    }

    private func writeAnswers() {
        guard !answersReady.isEmpty else { return }
        let answers = answersReady
        answersReady = []
        for promise in answers { answerReady(promise, server: self) }
    }

    /// Has every HTTP body resumed in this pass, and every follower of the streams appended to in it, write what it
    /// has: at once where its socket allows, else in a writeable callback (`HTTPStreamWriter.flush`,
    /// `BroadcastStream.wake`), so fan-out adds no loop turn.
    ///
    /// While a connection's input waits in the kernel beyond what one read takes (`--receive-buffer`), the wakes are
    /// put off to the end of the next pass, up to `maxDeferredWakes` passes: a writer sending faster than a read a
    /// pass would otherwise have every follower write a few frames per read, and those writes, not the actions,
    /// become the server's work. The next pass does not wait, since that input is ready to read.
    private func wakeStreams() {
        pass &+= 1
        readRound &+= 1
        // Only while a connection is still read: one paused or closed in this pass leaves nothing to wait for.
        let putOff = inputWaiting.contains { $0.isOpen && !$0.isPaused } && deferredWakes < Self.maxDeferredWakes
        inputWaiting = []
        // HTTP bodies are not put off: their producers bound what they queue (a follower past `--queue-limit` is cut
        // off), so a body waits no longer than the pass it was resumed in.
        if !bodiesToFlush.isEmpty {
            let bodies = bodiesToFlush
            bodiesToFlush = []
            for body in bodies { HTTPStreamWriter.flush(body, server: self) }
        }
        guard !streamsToWake.isEmpty else { return }
        if putOff {
            deferredWakes += 1
            return
        }
        deferredWakes = 0
        let streams = streamsToWake
        streamsToWake = []
        for stream in streams { stream.wake() }
    }

    /// Reads the waiting input of this pass's `inputWaiting` connections again, now, until `inputBytesPerPass` were
    /// read or none waits. Not while other work waits for the loop (a finished log write, say): reading on would
    /// hold up the replies and patches it releases, and the next write.
    private func readWaitingInput() {
        var reads = 1
        while !inputWaiting.isEmpty, (reads + 1) * configuration.receiveBufferBytes <= Self.inputBytesPerPass,
            !loop.hasWaitingWork
        {
            reads += 1
            readRound &+= 1
            let waiting = inputWaiting
            inputWaiting = []
            for connection in waiting { connection.readAgain() }
        }
    }

    /// After an `accept` in this pass failed for want of descriptors: refuses the connections waiting behind it (so
    /// the loop does not spin on a listening socket it cannot accept from) and tells the delegate.
    private func checkDescriptors() {
        guard let failure = LibWebSocketsLog.takeAcceptFailure() else { return }
        let refused = reserve?.refuseWaiting() ?? 0
        delegate.descriptorsRanOut(errno: failure, refused: refused)
    }

    deinit {
        writeBuffer.deallocate()
        idlePolicy.deallocate()
        protocols.deinitialize(count: 2)
        protocols.deallocate()
        for string in cStrings { free(string) }
    }

    /// Closes every connection (each reports `connectionDidClose`) and ends the loop thread, waiting for it unless
    /// called on it. Any thread; idempotent.
    public func shutdown() {
        let first = shutdownRequested.withLock { requested in
            defer { requested = true }
            return !requested
        }
        if first { loop.requestStop() }
        loop.join()
    }
}

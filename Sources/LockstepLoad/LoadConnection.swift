import LockstepTransport
import Synchronization

/// One simulated client of `lockstep load`: checks that versions arrive contiguous, counts deliveries, records
/// send-to-receipt latency and, for a writer, sends actions and counts their acks.
///
/// Loop-bound: every method runs on its shard's loop thread (it is a `WebSocketClientDelegate`).
final class LoadConnection: WebSocketClientDelegate {
    /// Unretained: the shard owns its connections and outlives them, and a checked reference cost a retain and a
    /// release on each of millions of deliveries a second.
    private let unretainedShard: Unmanaged<LoadShard>
    var shard: LoadShard { unretainedShard.takeUnretainedValue() }
    /// The writer number, for writers; nil for readers.
    let writer: Int?
    /// The client's number in the run (writers first), and with it its token's subject.
    let index: Int
    /// The view `/p<view>` it follows (`--paths`), or nil for the whole room.
    let view: Int?
    private(set) var connection: WebSocketClientConnection?
    /// The last version seen; nil until the first snapshot.
    private(set) var version: Int?
    /// Patches received.
    private(set) var delivered = 0
    /// The versions each snapshot after the first skipped over (the server's slow-client resync): after, through.
    private(set) var resyncedRanges: [(after: Int, through: Int)] = []
    /// Snapshots after the first.
    private(set) var resyncs = 0
    /// Patches that were not exactly `version + 1` (or, when clients see only some versions, not above `version`).
    private(set) var gaps = 0
    /// Closed before the generator closed it (or never opened).
    private(set) var lost = false
    private var sequence = 0
    /// Burst: actions sent and not yet answered.
    private var inFlight = 0
    /// When the current socket read's first patch arrived: the receipt time of every patch in that read.
    private var readNanos: UInt64?

    init(shard: LoadShard, writer: Int?, index: Int, view: Int?) {
        unretainedShard = .passUnretained(shard)
        self.writer = writer
        self.index = index
        self.view = view
    }

    // MARK: - Writer

    /// Sends one action whose id carries `scheduledNanos`, the time the open-loop schedule (or, in burst, the
    /// clock) assigned to it.
    func sendAction(scheduledNanos: UInt64) {
        guard let connection, let writer else {
            shard.unsent.add(1, ordering: .relaxed)
            return
        }
        sequence += 1
        if shard.sendsPresence {
            let state = #"{"writer":\#(writer),"x":\#(sequence % 1_000),"y":\#(sequence / 1_000)}"#
            let text = #"{"type":"presence","state":\#(state)}"#
            connection.send(text: Array(text.utf8))
            shard.sent.add(1, ordering: .relaxed)
            return
        }
        inFlight += 1
        let id = "w\(writer)-\(sequence)-\(scheduledNanos)"
        var action = shard.actionHasID ? shard.actionJSON.replacing("$ID", with: id) : shard.actionJSON
        if shard.actionHasPath {
            action = action.replacing("$PATH", with: shard.layout.target(writer: writer, sequence: sequence).path)
        }
        let text = #"{"type":"action","id":"\#(id)","action":\#(action)}"#
        connection.send(text: Array(text.utf8))
        shard.sent.add(1, ordering: .relaxed)
    }

    /// Sends one setup action (before timing); its id is not one of the writers', so its ack and patches are
    /// told apart from the measured ones.
    func sendSetup(_ action: String) {
        guard let connection else { return }
        connection.send(text: Array(#"{"type":"action","id":"s\#(index)","action":\#(action)}"#.utf8))
    }

    /// Forgets the patches counted so far (the setup's), keeping the version reached.
    func resetCounts() {
        delivered = 0
        resyncs = 0
        resyncedRanges = []
    }

    /// Burst: an answer arrived; keep the window full while the run lasts.
    private func answered() {
        inFlight -= 1
        if shard.burstWindow > 0, shard.running.load(ordering: .relaxed) {
            while inFlight < shard.burstWindow { sendAction(scheduledNanos: LoadClock.now()) }
        }
    }

    // MARK: - WebSocketClientDelegate

    func clientDidConnect(_ connection: WebSocketClientConnection) {
        self.connection = connection
        shard.connectionOpened(self)
    }

    /// Binary messages and oversized ones are not Lockstep's; text arrives through `didReceiveText`.
    func client(_ connection: WebSocketClientConnection, didReceive message: InboundMessage) {}

    /// Every server message, read in place in the receive buffer: no copy, no allocation.
    func client(_ connection: WebSocketClientConnection, didReceiveText bytes: UnsafeRawBufferPointer) {
        let bytes = bytes.assumingMemoryBound(to: UInt8.self)
        shard.receivedBytes.add(bytes.count, ordering: .relaxed)
        received(kind: LoadMessageScanner.kind(of: bytes), bytes: bytes)
    }

    func clientWillRead(_ connection: WebSocketClientConnection) {
        readNanos = nil
    }

    func clientDidClose(_ connection: WebSocketClientConnection, code: UInt16?, reason: String) {
        let wasOpen = self.connection != nil
        self.connection = nil
        if !shard.closing {
            lost = true
            shard.connectionLost(self, wasOpen: wasOpen, reason: reason)
        }
    }

    /// Closes the connection on purpose (end of run).
    func close() {
        connection?.close()
    }

    // MARK: - Messages

    private func received(kind: LoadMessageScanner.Kind, bytes: UnsafeBufferPointer<UInt8>) {
        switch kind {
        case .patch:
            guard let found = LoadMessageScanner.version(in: bytes, from: 9) else { return }
            if let version,
                found.value <= version || (shard.everyVersionReachesEveryone && found.value != version + 1)
            {
                gaps += 1
                shard.gaps.add(1, ordering: .relaxed)
            }
            version = found.value
            delivered += 1
            let now = readNanos ?? LoadClock.now()
            readNanos = now
            let cause = LoadMessageScanner.causeID(in: bytes, from: found.end)
            // Guaranteed: the shard `shard` returns is retained around each call on it; this one is not.
            unretainedShard._withUnsafeGuaranteedRef { $0.delivered(at: now, scheduledNanos: cause?.scheduledNanos) }
        case .ack:
            guard let found = LoadMessageScanner.version(in: bytes, from: 9) else { return }
            guard let id = LoadMessageScanner.firstID(in: bytes) else {
                shard.setupAcks.add(1, ordering: .relaxed)
                return
            }
            let target = shard.layout.target(writer: id.writer, sequence: id.sequence)
            shard.acked(version: found.value, by: target.audience)
            answered()
        case .snapshot, .resume:
            guard let found = LoadMessageScanner.version(in: bytes, from: 9) else { return }
            if let version {
                resyncs += 1
                shard.resyncs.add(1, ordering: .relaxed)
                if found.value < version {
                    gaps += 1
                    shard.gaps.add(1, ordering: .relaxed)
                } else {
                    resyncedRanges.append((version, found.value))
                }
                self.version = found.value
            } else {
                version = found.value
                shard.connectionReady(self)
            }
        case .error:
            shard.recordError(String(decoding: bytes, as: UTF8.self))
            if writer != nil, LoadMessageScanner.firstID(in: bytes) != nil { answered() }
        case .presence:
            if shard.sendsPresence { shard.deliveries.add(1, ordering: .relaxed) }
        case .other:
            break
        }
    }
}

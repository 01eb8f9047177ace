import Foundation
import LockstepTransport
import Synchronization

/// The once-a-second progress line on standard error (only on a terminal, so `--json` output and logs stay clean).
final class LoadProgress {
    private let shards: [LoadShard]
    private let clients: Int
    private let enabled: Bool
    /// `--scenario http`'s writers, whose requests count as sent and acked actions.
    var httpWriters: [LoadHTTPWriter] = []
    private let began = LoadClock.now()
    /// When the next line is due, in `LoadClock` nanoseconds.
    private(set) var nextTick: UInt64

    init(shards: [LoadShard], clients: Int, enabled: Bool) {
        self.shards = shards
        self.clients = clients
        self.enabled = enabled
        nextTick = began + 1_000_000_000
    }

    /// Prints a line if one is due. Main thread.
    func tick(now: UInt64) {
        guard now >= nextTick else { return }
        nextTick += 1_000_000_000
        if nextTick <= now { nextTick = now + 1_000_000_000 }
        guard enabled else { return }
        func total(_ counter: (LoadShard) -> Int) -> Int { shards.reduce(0) { $0 + counter($1) } }
        func requests(_ counter: (LoadHTTPWriter) -> Int) -> Int { httpWriters.reduce(0) { $0 + counter($1) } }
        // Each shard's p99 of the last second, computed on its own loop; the worst shard is shown.
        let p99 = shards.map { $0.intervalP99.load(ordering: .relaxed) }.max() ?? 0
        for shard in shards { shard.client.loop.execute { shard.refreshIntervalP99() } }
        let line = String(
            format: "[%4ds] connected %d/%d  sent %d  acked %d  delivered %d  p99 %.2f ms\n",
            Int((now - began) / 1_000_000_000), total { $0.ready.load(ordering: .relaxed) }, clients,
            total { $0.sent.load(ordering: .relaxed) } + requests { $0.sent.load(ordering: .relaxed) },
            total { $0.acks.load(ordering: .relaxed) } + requests { $0.acked.load(ordering: .relaxed) },
            total { $0.deliveries.load(ordering: .relaxed) }, Double(p99) / 1000
        )
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Sleeps until `deadline`, printing lines on the way. Main thread.
    func wait(until deadline: UInt64) {
        while true {
            let now = LoadClock.now()
            if now >= deadline { return }
            tick(now: now)
            LoadClock.sleep(until: min(deadline, nextTick))
        }
    }
}

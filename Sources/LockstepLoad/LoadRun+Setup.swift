import LockstepTransport
import Synchronization

/// The room a layout needs before timing starts: the views' parents and every client's private subtree.
extension LoadRun {
    /// Client 0 creates the parents first; then every open client creates its own private subtree. Each phase
    /// waits for its acks; the counts these actions caused are reset before timing.
    func setUp(shards: [LoadShard], progress: LoadProgress) throws(LoadError) {
        var expected = 0
        if plan.layout.firstSetupAction != nil {
            let shard = shards[0]
            shard.client.loop.execute { shard.sendFirstSetup() }
            expected += 1
            try waitForSetup(acks: expected, shards: shards, progress: progress)
        }
        if plan.layout.privatePart != nil {
            expected += shards.reduce(0) { total, shard in total + shard.onLoop { shard.sendOwnSetup() } }
            try waitForSetup(acks: expected, shards: shards, progress: progress)
        }
    }

    private func waitForSetup(acks: Int, shards: [LoadShard], progress: LoadProgress) throws(LoadError) {
        let deadline = LoadClock.now() + plan.drain.nanoseconds
        while shards.reduce(0, { $0 + $1.setupAcks.load(ordering: .relaxed) }) < acks {
            if shards.contains(where: { $0.errors.load(ordering: .relaxed) > 0 }) {
                let error = shards.lazy.compactMap { shard in shard.onLoop { shard.firstError } }.first
                throw .setup(error ?? "the server answered with an error")
            }
            let now = LoadClock.now()
            if now >= deadline { throw .setup("\(acks) setup actions not all acknowledged within --drain") }
            progress.tick(now: now)
            LoadClock.sleep(until: now + 5_000_000)
        }
    }
}

import Histogram

/// A shard's send-to-receipt latencies in microseconds: the whole run's, and the current progress interval's.
///
/// Every delivery records into both, so they live behind pointers rather than in the shard's `var`s: changing a
/// histogram stored in a class property takes a dynamic exclusivity check, and the checks took 5 % of the
/// generator's CPU at four million deliveries a second. Loop-bound, as its shard.
struct LoadLatencies: ~Copyable {
    private let run = UnsafeMutablePointer<Histogram<UInt64>>.allocate(capacity: 1)
    private let interval = UnsafeMutablePointer<Histogram<UInt64>>.allocate(capacity: 1)

    /// From 1 µs to 10 minutes at 3 significant digits.
    init() {
        for histogram in [run, interval] {
            histogram.initialize(
                to: Histogram(
                    lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000,
                    numberOfSignificantValueDigits: .three))
        }
    }

    deinit {
        for histogram in [run, interval] {
            histogram.deinitialize(count: 1)
            histogram.deallocate()
        }
    }

    /// The whole run's latencies so far.
    var whole: Histogram<UInt64> { run.pointee }

    /// Records one latency, clamped to the histograms' range.
    func record(nanos: UInt64) {
        let micros = max(1, min(nanos / 1000, 600_000_000))
        _ = run.pointee.record(micros)
        _ = interval.pointee.record(micros)
    }

    /// The p99 of the latencies recorded since the last call (0 if none); starts a new interval.
    func takeIntervalP99() -> UInt64 {
        defer { interval.pointee.reset() }
        return interval.pointee.totalCount == 0 ? 0 : interval.pointee.valueAtPercentile(99)
    }

    /// Forgets everything recorded (the setup's latencies, before timing starts).
    func reset() {
        run.pointee.reset()
        interval.pointee.reset()
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
// Once a dependency imports this shim module too, `timespec` and `timeval` members resolve through it.
#if canImport(SwiftOverlayShims)
import SwiftOverlayShims
#endif

/// The one monotonic clock `lockstep load` uses, so a send time written into an action id by one thread can be
/// subtracted from a receipt time read on any other thread of the same process.
enum LoadClock {
    /// Nanoseconds since an arbitrary fixed point (CLOCK_MONOTONIC).
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Sleeps until `deadline` (a `now()` value); returns at once if it has passed.
    static func sleep(until deadline: UInt64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }

    /// User plus system CPU time this process has used, in seconds (getrusage).
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ value: timeval) -> Double { Double(value.tv_sec) + Double(value.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

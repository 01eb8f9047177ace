public import Clocks

/// Whether a task sleeps on `clock`, waiting for the test to advance it.
public func somethingSleeps(on clock: TestClock<Duration>) async -> Bool {
    do {
        try await clock.checkSuspension()
        return false
    } catch {
        return true
    }
}

import ArgumentParser

/// What `lockstep load` measures; each scenario answers one question about the server.
enum LoadScenario: String, CaseIterable, ExpressibleByArgument {
    /// Open-loop writers at a fixed total rate, every client checking and timing each patch.
    case fanout
    /// Open and hold the sockets: how many, and (with --server-pid) at what memory cost.
    case connect
    /// Each writer keeps a window of actions in flight: the highest throughput the server sustains.
    case burst
}

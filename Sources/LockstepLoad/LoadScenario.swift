/// What a load run measures; each scenario answers one question about the server.
public enum LoadScenario: String, CaseIterable, Sendable {
    /// Open-loop writers at a fixed total rate, every client checking and timing each patch.
    case fanout
    /// Open and hold the sockets: how many, and (with ``LoadPlan/serverPID``) at what memory cost.
    case connect
    /// Each writer keeps a window of actions in flight: the highest throughput the server sustains.
    case burst
}

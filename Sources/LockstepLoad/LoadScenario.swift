/// What a load run measures; each scenario answers one question about the server.
public enum LoadScenario: String, CaseIterable, Sendable {
    /// Whether the first ``LoadPlan/writers`` WebSocket clients send actions (the others only read).
    var hasWebSocketWriters: Bool { self != .connect && self != .http }

    /// Open-loop writers at a fixed total rate, every client checking and timing each patch.
    case fanout
    /// Open and hold the sockets: how many, and (with ``LoadPlan/serverPID``) at what memory cost.
    case connect
    /// Each writer keeps a window of actions in flight: the highest throughput the server sustains.
    case burst
    /// ``LoadPlan/writers`` post actions over HTTP (`POST /rooms/ROOM`), each on its own keep-alive connection, one
    /// at a time (closed loop); every WebSocket client is a reader checking and timing each patch. Measures requests
    /// per second and each request's latency.
    case http
    /// The writers send presence states (`{"type":"presence","state":..}`, a cursor) on the fanout's open-loop
    /// schedule instead of actions; every client reads the merged `changed` messages. Nothing is versioned or
    /// acknowledged: compare its server CPU and bytes with fanout's moves written as actions.
    case presence
}

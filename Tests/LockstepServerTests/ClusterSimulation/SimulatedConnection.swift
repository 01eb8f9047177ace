/// One WebSocket between a simulated client and server: two queues delivered in order (TCP), cut at any moment.
final class SimulatedConnection {
    let id: Int
    let client: Int
    let server: Int
    /// The server's life this connection belongs to: a killed server's connections die with it.
    let incarnation: Int
    let room: String
    /// `since=` of its handshake.
    let since: Int?
    var open = true
    /// The server will send nothing more (it sent a close).
    var closing = false
    var toServer: [ClientFrame] = []
    var toClient: [ServerFrame] = []

    init(id: Int, client: Int, server: Int, incarnation: Int, room: String, since: Int?) {
        self.id = id
        self.client = client
        self.server = server
        self.incarnation = incarnation
        self.room = room
        self.since = since
    }

    func cut() {
        open = false
        toServer = []
        toClient = []
    }
}

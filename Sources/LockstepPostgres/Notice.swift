import LockstepStorage

/// One notification on the ``PostgresRoomStorage/channel``: `c NODE VERSION ROOM` for a commit, `p NODE ROOM` for a
/// new peer list (fields separated by spaces; the room comes last, so it may contain anything).
struct Notice: Equatable {
    var event: StorageEvent
    /// The server that sent it.
    var node: Int

    init(_ event: StorageEvent, node: Int) {
        self.event = event
        self.node = node
    }

    init?(payload: String) {
        let fields = payload.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        switch fields.first {
        case "c" where fields.count == 4:
            guard let node = Int(fields[1]), let version = Int(fields[2]) else { return nil }
            self.init(.committed(room: String(fields[3]), version: version), node: node)
        case "p" where fields.count >= 3:
            let fields = payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard let node = Int(fields[1]) else { return nil }
            self.init(.peersChanged(room: String(fields[2])), node: node)
        default:
            return nil
        }
    }

    var payload: String {
        switch event {
        case .committed(let room, let version): "c \(node) \(version) \(room)"
        case .peersChanged(let room): "p \(node) \(room)"
        case .resynchronise: "r \(node)"
        }
    }
}

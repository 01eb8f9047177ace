/// Open WebSocket connections by peer address, so one host cannot take every slot.
///
/// Counted from open to close, unauthorized connections included (they hold a socket until their
/// close completes). A handshake is checked against the count when it arrives; handshakes still in
/// flight are not counted, so a burst can pass the cap by the handshakes that complete together.
struct ConnectionsPerAddress {
    private var counts: [String: Int] = [:]

    /// Whether `address` may open one more connection under `limit`.
    func allows(_ address: String, limit: Int) -> Bool {
        counts[address, default: 0] < limit
    }

    mutating func opened(_ address: String) {
        counts[address, default: 0] += 1
    }

    mutating func closed(_ address: String) {
        guard let count = counts[address] else { return }
        counts[address] = count > 1 ? count - 1 : nil
    }

    func count(for address: String) -> Int {
        counts[address, default: 0]
    }
}

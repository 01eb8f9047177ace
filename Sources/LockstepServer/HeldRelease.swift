/// Something a ``DurabilityQueue`` holds back until the log has what precedes it: the room it belongs to, and whether
/// it is an answer, which a failed write of other rooms still lets out.
protocol HeldRelease {
    var roomName: String { get }
    var isReply: Bool { get }
}

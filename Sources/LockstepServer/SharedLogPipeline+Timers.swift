import LockstepStorage

/// Timers on several servers: each reads the log's timers every second and arms those due soon; the room's locked
/// write lets only one server apply each (``Room/loggedTimers``).
extension SharedLogPipeline {
    var timerPoll: Duration? { .seconds(1) }

    func timersChanged(scheduled: [StoredTimer], gone: [TimerKey], in room: Room, server: isolated some RoomHost) {
        state(of: room, server: server).writes.timersChanged(scheduled: scheduled, gone: gone)
    }
}

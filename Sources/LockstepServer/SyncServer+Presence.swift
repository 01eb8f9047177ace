import LockstepCore
import LockstepJSON
import LockstepTransport

/// Presence: who is in a room, and what each client says it is doing (its state).
///
/// Joins and leaves send the room's full list (`peers`, with states); a state that changes alone sends only the
/// peers whose state changed (`changed`). Either goes out at most once per `presenceInterval` for each 100 peers, so
/// what happens in between is merged: a burst of states costs one message per interval, with each client's latest.
/// States are the connection's alone: never stored, never in the room's versions, history or log.
extension SyncServer {
    /// A client's `presence` message: its new state (`null` clears it), kept on its session, goes to the room in the
    /// next presence. A state over `presenceLimit` bytes as the server writes it is `too_large`; the connection stays.
    func setPresence(_ state: JSON, id: String?, of session: Session) {
        let size = state.serialized().count
        guard size <= configuration.presenceLimit else {
            let message =
                "a presence state of \(size) bytes is over the \(configuration.presenceLimit)-byte limit "
                + "(--presence-limit)"
            send(.error(id: id, code: "too_large", message: message), to: session)
            return
        }
        let new = state.isNull ? nil : state
        guard new != session.presenceState else { return }
        session.presenceState = new
        presenceStatesChanged(of: [session.client], in: session.room)
    }

    /// The presence states of `clients` (here or on other servers) changed: the next presence says so.
    func presenceStatesChanged(of clients: [String], in room: Room) {
        waitForPresence(room.presence.statesChanged(clients, interval: presenceInterval(of: room)), in: room)
    }

    /// Sends one presence for every join and leave of a room since the last one.
    ///
    /// Presence lists the whole room, so its cost grows with the square of the room's size: it goes
    /// out at most once per `presenceInterval` for each 100 peers, however many join at once.
    func schedulePresence(in room: Room) {
        waitForPresence(room.presence.joinedOrLeft(interval: presenceInterval(of: room)), in: room)
    }

    /// `presenceInterval` for each 100 peers of the room.
    private func presenceInterval(of room: Room) -> Duration {
        configuration.presenceInterval * max(1, room.sessions.count / 100)
    }

    /// Sends the room's next presence at `due`, when the throttle says to wait for it now.
    private func waitForPresence(_ due: Duration?, in room: Room) {
        guard let due else { return }
        Task {
            try? await self.clock.sleep(until: due)
            self.flushPresence(in: room)
        }
    }

    /// Sends the room's full presence after a join or leave, else the states that changed; then publishes this
    /// server's clients to the others.
    private func flushPresence(in room: Room) {
        let presence = room.presence.due()
        guard presence != .nothing else { return }
        let (limit, remote) = (configuration.presencePeers, pipeline.remotePeers(of: room))
        let frame =
            if case .changed(let clients) = presence {
                room.changedPresenceFrame(clients, limit: limit, remote: remote)
            } else {
                room.presenceFrame(limit: limit, remote: remote)
            }
        if let frame {
            room.presence.sent(at: clock.now)
            room.broadcastPresence(frame)
        }
        pipeline.peersChanged(in: room, server: self)
    }

    /// The room's current presence, to a client that follows the room again: what went out while it did not is
    /// lost to it.
    func sendPresence(to session: Session) {
        session.connection.send(
            session.room.presenceFrame(
                limit: configuration.presencePeers, remote: pipeline.remotePeers(of: session.room)))
    }
}

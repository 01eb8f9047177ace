#if LOCKSTEP_MUTANTS
import LockstepCore
#endif
import LockstepStorage

/// The timers this server arms and its one wait for the soonest of them, with no I/O: each event returns what the
/// server must do with the wait (``Wait``) and where due timers go (``Delivery``), and the server carries it out (a
/// sleep on its injected clock, a room's turn, a room read from storage).
///
/// One wait at a time, always for the soonest pending timer: scheduling, replacing or cancelling one that changes
/// which is soonest moves the wait, never leaving one for a timer that is gone. A wait that ends hands every due timer
/// to its room in due order; timers that come due in a room being read wait behind those already waiting for it. A
/// timer stays in the book until its room's turn fires or drops it (``remove(_:)``): one whose turn never came (a
/// write given up on, a room dropped) fires again once storage lists it again (``load(_:)``).
struct TimerSchedule {
    /// What the server's one wait must become.
    enum Wait: Equatable {
        /// As it is.
        case keep
        /// None: no timer is pending.
        case cancel
        /// Until `due` (milliseconds since the Unix epoch), in place of the one armed.
        case arm(due: Int)
    }

    /// Where a timer that came due goes.
    enum Delivery: Equatable {
        /// To its room, which is in memory, for its turn.
        case fire(StoredTimer)
        /// To its room once read: the server reads it, and ``roomRead(_:found:)`` says what to fire then.
        case readRoom(String)
    }

    /// The pending timers.
    private(set) var book = TimerBook()
    /// When the armed wait ends; nil when none is armed.
    private(set) var armed: Int?
    /// The order of the last timer scheduled here.
    private(set) var lastOrder = 0
    /// Due timers, in due order, of rooms being read.
    private var awaitingRoom: [String: [StoredTimer]] = [:]
    /// The order of each timer handed to its room and not fired or removed since.
    private var handedOver: [TimerKey: Int] = [:]
    /// Rooms whose timers are being read again from storage, each with its read's number and the names of the
    /// room's timers scheduled or removed here since.
    private var rereading: [String: (read: Int, touched: Set<String>)] = [:]
    private var rereads = 0

    /// Schedules the room's timer `name`, due at `due`, replacing the one of that name; `now` orders it after every
    /// timer scheduled before it, here and (as far as clocks agree) on other servers.
    mutating func schedule(
        room: String, name: String, due: Int, request: [UInt8], now: Int
    ) -> (timer: StoredTimer, wait: Wait) {
        lastOrder = max(lastOrder + 1, now * 1000)
        let timer = StoredTimer(room: room, name: name, due: due, order: lastOrder, request: request)
        book.insert(timer)
        rereading[room]?.touched.insert(name)
        return (timer, rearm())
    }

    /// Takes the timer at `key` away (cancelled, or fired in its room's turn).
    mutating func remove(_ key: TimerKey) -> Wait {
        book.remove(key)
        handedOver[key] = nil
        rereading[key.room]?.touched.insert(key.name)
        return rearm()
    }

    /// The room's changes to its timers may not be stored (a write of the room failed): its timers leave the book
    /// until storage's are read again. Returns the number of that read, for ``reread(_:read:stored:)``.
    mutating func forget(room: String) -> (read: Int, wait: Wait) {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.failedWriteKeepsTimers) { return (rereads, .keep) }
        #endif
        for timer in book.pending(in: room) {
            let key = TimerKey(room: room, name: timer.name)
            book.remove(key)
            handedOver[key] = nil
        }
        rereads += 1
        rereading[room] = (rereads, [])
        return (rereads, rearm())
    }

    /// The room's timers as storage holds them, read after ``forget(room:)``: each goes back into the book, unless a
    /// timer of its name was scheduled or removed here since (the book has that, and its write). A read that a later
    /// ``forget(room:)`` overtook changes nothing.
    mutating func reread(_ room: String, read: Int, stored: [StoredTimer]) -> Wait {
        guard let reading = rereading[room], reading.read == read else { return .keep }
        rereading[room] = nil
        for timer in stored where timer.room == room && !reading.touched.contains(timer.name) { book.insert(timer) }
        return rearm()
    }

    /// Timers storage holds: each one the book does not hold as it is goes in, and so does one handed to its room
    /// whose turn has not fired it (storage still lists it), to be handed over again.
    mutating func load(_ stored: [StoredTimer]) -> Wait {
        for timer in stored {
            let key = TimerKey(room: timer.room, name: timer.name)
            #if LOCKSTEP_MUTANTS
            let handedOverAgain = !Mutant.isActive(.handedOverTimerNotReloaded)
            #else
            let handedOverAgain = true
            #endif
            guard book.timer(key)?.order != timer.order || (handedOverAgain && handedOver[key] == timer.order)
            else { continue }
            handedOver[key] = nil
            book.insert(timer)
        }
        return rearm()
    }

    /// The wait ended at `now`: every timer due goes to its room, in due order (`inMemory` says which rooms are), and
    /// the wait moves to the next.
    mutating func waitEnded(now: Int, inMemory: (String) -> Bool) -> (deliveries: [Delivery], wait: Wait) {
        armed = nil
        var deliveries: [Delivery] = []
        for timer in book.due(by: now) {
            handedOver[TimerKey(room: timer.room, name: timer.name)] = timer.order
            if awaitingRoom[timer.room] != nil {
                awaitingRoom[timer.room]?.append(timer)
            } else if inMemory(timer.room) {
                deliveries.append(.fire(timer))
            } else {
                awaitingRoom[timer.room] = [timer]
                deliveries.append(.readRoom(timer.room))
            }
        }
        return (deliveries, rearm())
    }

    /// A room that timers came due in was read (`found`), or could not be: the timers to fire in it, in order. Those
    /// of a room that could not be read go back to the book, to fire on the next try (``rearm()``).
    mutating func roomRead(_ name: String, found: Bool) -> [StoredTimer] {
        let due = awaitingRoom.removeValue(forKey: name) ?? []
        guard found else {
            for timer in due {
                handedOver[TimerKey(room: timer.room, name: timer.name)] = nil
                book.insert(timer)
            }
            return []
        }
        return due
    }

    /// The wait for the soonest pending timer: moved when that is not the one armed.
    mutating func rearm() -> Wait {
        let due = book.nextDue()
        guard due != armed else { return .keep }
        armed = due
        return due.map { .arm(due: $0) } ?? .cancel
    }
}

internal import CLibWebSockets
import Synchronization
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The thread that owns one libwebsockets context; also a SerialExecutor so an actor can be isolated to it.
///
/// How it waits for the context's sockets is its ``EventLoopBackend``; a context is configured for it with
/// `configure(_:)` before it is created.
///
/// libwebsockets is single-threaded per context: only `lws_cancel_service` may be called from elsewhere. Work from
/// other threads goes into a locked inbox, then `lws_cancel_service` wakes the loop, which drains the inbox in
/// `LWS_CALLBACK_EVENT_WAIT_CANCELLED`. After shutdown, late work still runs, serially, on the submitting thread.
// @unchecked Sendable: mutable state is either inside `state` (a Mutex), in `ownerThread` (an Atomic), or
// `stopping`, which is read and written only on the loop thread.
public final class ServiceLoop: SerialExecutor, @unchecked Sendable {
    private enum Work: Sendable {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private enum Phase {
        case idle, running, destroying, terminated
    }

    private struct State {
        var work: [Work] = []
        var phase: Phase = .idle
        /// The context as a bit pattern; valid while `phase == .running`.
        var context: UInt = 0
        var thread: pthread_t?
        var joined = false
        /// After termination: whether some thread is currently running late work.
        var lateRunnerActive = false
    }

    private let state = Mutex(State())
    private let ownerThread = Atomic<UInt>(0)
    /// Loop thread only.
    private var stopping = false
    /// Called on the loop thread after each inbox drain; set before `start`.
    private var wakeHandler: (() -> Void)?
    /// Called on the loop thread right after the context was destroyed; set before `start`.
    private var destroyedHandler: (() -> Void)?
    /// Runs after every pass of the event loop, before it waits again; says whether the pass only read, so that
    /// input may gather before the next. Loop thread only.
    private var turnHandler: (() -> Bool)?
    /// Runs the context's passes: poll(2) or libev. Chosen once, at init.
    private let driver: any LoopDriver
    /// Lets input gather before a pass that follows one that only read; nil: every pass at once.
    private let gathering: InputGathering?

    init(backend: EventLoopBackend, collectInterval: Duration = .zero, gatherInterval: Duration = .zero) {
        driver = backend.makeDriver(collectInterval: collectInterval)
        gathering = gatherInterval > .zero ? InputGathering(interval: gatherInterval) : nil
    }

    /// Has the context created from `info` run on this loop's backend.
    func configure(_ info: inout lws_context_creation_info) {
        driver.configure(&info)
    }

    /// Runs a job of an actor isolated to this loop. Any thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    /// Runs `body` on the loop thread, after everything submitted before it. Any thread.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        submit(.closure(body))
    }

    /// Traps unless called on the loop thread; lets `assumeIsolated` succeed inside libwebsockets callbacks.
    public func checkIsolated() {
        precondition(isCurrent, "not on this ServiceLoop's thread")
    }

    /// Answers the runtime's isolation query without trapping.
    public func isIsolatingCurrentContext() -> Bool? {
        isCurrent
    }

    /// Whether work submitted from other threads (or by an actor isolated to the loop) waits for the next pass.
    var hasWaitingWork: Bool {
        state.withLock { !$0.work.isEmpty }
    }

    /// Whether the caller runs on the loop thread (or, after shutdown, is running the loop's late work).
    public var isCurrent: Bool {
        ownerThread.load(ordering: .acquiring) == currentThreadID()
    }

    // MARK: - Internal

    /// Starts the service thread for `context`. `owner` stays alive until the thread has destroyed the context;
    /// `onTurnEnd` runs after each pass and says whether the pass only read (input may gather before the next).
    func start(
        context: OpaquePointer, owner: AnyObject, onWake: (() -> Void)?, onTurnEnd: (() -> Bool)? = nil,
        onDestroyed: (() -> Void)?
    ) {
        wakeHandler = onWake
        turnHandler = onTurnEnd
        destroyedHandler = onDestroyed
        state.withLock {
            $0.context = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context)))
            $0.phase = .running
        }
        let body = ThreadBody { [self] in
            self.run(context: context)
            withExtendedLifetime(owner) {}
        }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(body).toOpaque()
        let result = pthread_create(&thread, nil, { argument in
            let body = Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue()
            body.run()
            return nil
        }, box)
        precondition(result == 0, "pthread_create failed: \(result)")
        state.withLock { $0.thread = thread }
    }

    /// Asks the loop to stop waiting for events, destroy its context, and end. Any thread; idempotent.
    func requestStop() {
        execute { [self] in self.stopping = true }
    }

    /// Waits for the loop thread to end, unless called on it. Idempotent.
    func join() {
        if isCurrent { return }
        let thread: pthread_t? = state.withLock {
            guard !$0.joined, let thread = $0.thread else { return nil }
            $0.joined = true
            return thread
        }
        if let thread { pthread_join(thread, nil) }
    }

    /// Runs everything in the inbox; called on the loop thread from `LWS_CALLBACK_EVENT_WAIT_CANCELLED`.
    func drainInbox() {
        let work = state.withLock { state -> [Work] in
            let work = state.work
            state.work = []
            return work
        }
        for item in work { run(item) }
        wakeHandler?()
    }

    private func submit(_ work: Work) {
        enum Action { case none, wake(OpaquePointer), runLate }
        let action: Action = state.withLock { state in
            switch state.phase {
            case .idle, .destroying:
                state.work.append(work)
                return .none
            case .running:
                let wasEmpty = state.work.isEmpty
                state.work.append(work)
                guard wasEmpty, let context = OpaquePointer(bitPattern: state.context) else { return .none }
                // Inside the lock, so the loop cannot start destroying the context meanwhile.
                lws_cancel_service(context)
                gathering?.interrupt()
                return .none
            case .terminated:
                state.work.append(work)
                if state.lateRunnerActive { return .none }
                state.lateRunnerActive = true
                return .runLate
            }
        }
        if case .runLate = action { runLateWork() }
    }

    private func runLateWork() {
        let previous = ownerThread.exchange(currentThreadID(), ordering: .acquiringAndReleasing)
        while true {
            let work: [Work] = state.withLock { state in
                let work = state.work
                state.work = []
                if work.isEmpty { state.lateRunnerActive = false }
                return work
            }
            if work.isEmpty { break }
            for item in work { run(item) }
        }
        ownerThread.store(previous, ordering: .releasing)
    }

    private func run(_ work: Work) {
        switch work {
        case .job(let job): job.runSynchronously(on: asUnownedSerialExecutor())
        case .closure(let body): body()
        }
    }

    private func run(context: OpaquePointer) {
        ownerThread.store(currentThreadID(), ordering: .releasing)
        driver.start(context)
        var onlyRead = false
        while !stopping {
            // Input libwebsockets holds already (a request's body read with its head) is served at once, as is work.
            if onlyRead {
                gathering?.wait { hasWaitingWork || lws_service_adjust_timeout(context, 1, 0) == 0 }
            }
            gathering?.passBegins()
            if !driver.runPass(context) { break }
            onlyRead = turnHandler?() ?? false
        }
        driver.stop(context)
        state.withLock { $0.phase = .destroying }
        drainInbox()
        lws_context_destroy(context)
        destroyedHandler?()
        destroyedHandler = nil
        while true {
            let work: [Work] = state.withLock { state in
                let work = state.work
                state.work = []
                if work.isEmpty { state.phase = .terminated }
                return work
            }
            if work.isEmpty { break }
            for item in work { run(item) }
        }
        wakeHandler = nil
        turnHandler = nil
        ownerThread.store(0, ordering: .releasing)
    }
}

/// Carries the loop body into the new thread.
// @unchecked Sendable: handed to exactly one new thread and never touched by the creating thread afterwards.
private final class ThreadBody: @unchecked Sendable {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

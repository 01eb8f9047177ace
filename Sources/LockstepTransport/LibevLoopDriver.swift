internal import CLibWebSockets

/// The context on a libev loop of its own (epoll on Linux), passed to libwebsockets as its foreign loop and run here
/// one pass at a time, so the loop thread still does its own work between passes.
final class LibevLoopDriver: LoopDriver {
    /// The libev loop, in the one-element array `lws_context_creation_info.foreign_loops` points to.
    private let loops: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private var tick: UnsafeMutableRawPointer?

    /// With a `collectInterval`, each pass first waits that long for more sockets to become ready.
    init(collectInterval: Duration = .zero) {
        loops = .allocate(capacity: 1)
        loops.initialize(to: CLibWebSockets_event_loop_new())
        if collectInterval > .zero {
            let (seconds, attoseconds) = collectInterval.components
            CLibWebSockets_event_loop_collect(loops.pointee, Double(seconds) + Double(attoseconds) / 1e18)
        }
    }

    deinit {
        if let loop = loops.pointee { CLibWebSockets_event_loop_destroy(loop) }
        loops.deallocate()
    }

    func configure(_ info: inout lws_context_creation_info) {
        info.options |= CLibWebSockets_event_loop_option()
        info.foreign_loops = loops
    }

    func start(_ context: OpaquePointer) {
        tick = CLibWebSockets_tick_start(loops.pointee, context)
    }

    func runPass(_ context: OpaquePointer) -> Bool {
        CLibWebSockets_event_loop_run_once(loops.pointee)
        return true
    }

    func stop(_ context: OpaquePointer) {
        if let tick { CLibWebSockets_tick_stop(loops.pointee, tick) }
        tick = nil
    }
}

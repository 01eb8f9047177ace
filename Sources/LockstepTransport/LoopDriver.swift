internal import CLibWebSockets

/// One way of running a libwebsockets context's passes on its ``ServiceLoop`` thread.
protocol LoopDriver: AnyObject {
    /// Sets what the context created from `info` needs to run on this driver.
    func configure(_ info: inout lws_context_creation_info)
    /// Called on the loop thread before the first pass.
    func start(_ context: OpaquePointer)
    /// Waits until something is ready (a socket, a timeout, `lws_cancel_service`) and handles it; false when the
    /// context can no longer be serviced.
    func runPass(_ context: OpaquePointer) -> Bool
    /// Called on the loop thread after the last pass, before the context is destroyed.
    func stop(_ context: OpaquePointer)
}

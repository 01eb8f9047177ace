internal import CLibWebSockets

/// libwebsockets' built-in loop: poll(2) over every descriptor of the context, each pass.
final class PollLoopDriver: LoopDriver {
    func configure(_ info: inout lws_context_creation_info) {}

    func start(_ context: OpaquePointer) {}

    func runPass(_ context: OpaquePointer) -> Bool {
        lws_service(context, 0) >= 0
    }

    func stop(_ context: OpaquePointer) {}
}

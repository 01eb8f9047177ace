import ServiceLifecycle
import UnixSignals

/// Serving as a process does: until the operator stops it, then without dropping what clients sent.
extension SyncServer {
    /// Serves until the process gets SIGINT (Ctrl-C) or SIGTERM, then drains (``drain()``: every request already
    /// read is answered and stored, every client is told to reconnect elsewhere, within
    /// `configuration.drainTimeout`) and shuts down. Returns once the server has stopped.
    public nonisolated func run() async throws {
        try await run(announcement: nil)
    }

    /// ``run()``, writing `announcement` to standard output once the signals are caught, so a script that reads it
    /// and sends SIGTERM drains the server rather than killing it.
    package nonisolated func run(announcement: String?) async throws {
        let service = ServerService(server: self, announcement: announcement)
        var group = ServiceGroupConfiguration(
            services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // The drain keeps its own deadline; this only bounds a drain that would not.
        group.maximumGracefulShutdownDuration = configuration.drainTimeout + .seconds(2)
        try await ServiceGroup(configuration: group).run()
    }
}

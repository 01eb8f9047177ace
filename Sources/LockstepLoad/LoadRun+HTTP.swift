/// `--scenario http`: the writers post over keep-alive HTTP/1.1 connections of their own, all served by one thread,
/// while the WebSocket clients read and check every patch.
extension LoadRun {
    /// Connects every HTTP writer before timing starts (writer i to URL i mod the URLs' count, from source address
    /// i mod `sourceAddresses` as the clients); none for the other scenarios. With tokens, each writer has its own
    /// (sub `h<i>`).
    func openHTTPWriters() throws(LoadError) -> [LoadHTTPWriter] {
        guard plan.scenario == .http else { return [] }
        let headers = try plan.layout.headers(subjects: (0..<plan.writers).map { LoadLayout.subject(httpWriter: $0) })
        return try (0..<plan.writers).map { index throws(LoadError) in
            let url = plan.urls[index % plan.urls.count]
            guard let target = LoadHTTPTarget(url: url) else { throw .transport("no HTTP target in \(url)") }
            let writer = LoadHTTPWriter(
                index: index, target: target, actionJSON: plan.actionJSON!,
                authorization: headers?[index]["Authorization"],
                sourceAddress: plan.sourceAddresses > 0 ? "127.0.0.\(2 + index % plan.sourceAddresses)" : nil,
                timeout: plan.requestTimeout)
            try writer.connectBeforeTiming()
            return writer
        }
    }

    /// Starts the writers at `start`, stops them at `end`, and waits for each one's last answer.
    func run(_ writers: [LoadHTTPWriter], start: UInt64, end: UInt64, progress: LoadProgress) throws(LoadError) {
        guard !writers.isEmpty else { return }
        let loop = try LoadHTTPLoop(writers: writers)
        loop.start(at: start)
        progress.wait(until: end)
        loop.stop()
        loop.waitUntilFinished()
    }
}

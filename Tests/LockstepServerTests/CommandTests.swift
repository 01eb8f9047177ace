import Testing

/// `LockstepCommand.main(apps:)` as the `lockstep` executable runs it: `--app` chooses among the apps it was given,
/// the first by default, and the root command is named after the executable.
@Suite(.timeLimit(.minutes(1))) struct CommandTests {
    @Test func theFirstAppIsServedByDefault() async throws {
        let server = try await Launched.serve(["--port", "0", "--memory"], environment: [:])
        #expect(server.announcement.contains("serving 'json' rooms"))
        #expect(await server.stop() == 0)
    }

    @Test func anUnknownAppNamesTheGivenOnes() async throws {
        let run = try await Launched.run(["serve", "--app", "chess"], environment: [:])
        #expect(run.status == 64)
        #expect(run.output.contains("unknown app 'chess'; choose one of: json, counter, todos"))
        let help = try await Launched.run(["serve", "--help"], environment: [:])
        // The help is wrapped to the terminal's width.
        let words = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("json, counter, todos (default: json)"))
        #expect(words.contains("USAGE: lockstep serve"))
    }
}

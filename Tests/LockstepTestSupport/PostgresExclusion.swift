public import Testing

/// Runs the tests it is given to one at a time across every suite that has it: each of them starts PostgreSQL and
/// several servers, which together would starve a two-core machine and turn timeouts into failures.
///
/// A test's time limit includes its wait for the turn, behind every other such test: suites with this trait take
/// ten minutes, enough for the whole queue, and still end a test that hangs.
public struct PostgresExclusion: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // The suite's own scope wraps its tests': only test cases take the turn, so a suite never waits on itself.
        guard testCase != nil else { return try await function() }
        await Self.turn.acquire()
        do {
            try await function()
        } catch {
            await Self.turn.release()
            throw error
        }
        await Self.turn.release()
    }

    private static let turn = Turn()

    /// A first-come, first-served lock for async code.
    private actor Turn {
        private var held = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func acquire() async {
            guard held else {
                held = true
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func release() {
            if waiting.isEmpty {
                held = false
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
}

extension Trait where Self == PostgresExclusion {
    /// One test with PostgreSQL at a time, across suites.
    public static var postgresExclusive: Self { PostgresExclusion() }
}

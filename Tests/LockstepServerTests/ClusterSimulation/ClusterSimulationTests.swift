import Foundation
import LockstepCore
import LockstepTestSupport
import Testing

/// The cluster simulation (``ClusterSimulation``) over many seeds. `SEEDS=N` runs seeds 1 to N (a short run by
/// default, as part of `make test`); `SEED=K` replays seed K alone and prints its trace. `make simulate` and
/// `make simulate-mutants` set these.
@Suite struct ClusterSimulationTests {
    /// Seeds of a run without `SEEDS`: well under a minute on two cores.
    static let defaultSeeds = 150

    static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name]
    }

    /// The first seed of `seeds` that breaks an invariant, with what broke, running them on two threads; nil when
    /// none does.
    static func firstFailure(in seeds: ClosedRange<UInt64>) async throws -> (seed: UInt64, violations: [String])? {
        let lanes = 2
        let failures = try await withThrowingTaskGroup(of: (UInt64, [String])?.self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    try await offThePool {
                        for seed in seeds where Int(seed % UInt64(lanes)) == lane {
                            let violations = ClusterSimulation(seed: seed).run()
                            if !violations.isEmpty { return (seed, violations) }
                        }
                        return nil
                    }
                }
            }
            var found: [(UInt64, [String])] = []
            for try await failure in group { if let failure { found.append(failure) } }
            return found
        }
        return failures.min { $0.0 < $1.0 }
    }

    /// How to replay `seed`, in the build that failed.
    static func replayCommand(_ seed: UInt64) -> String {
        #if LOCKSTEP_MUTANTS
        let mutant = Mutant.active.map { "LOCKSTEP_MUTANT=\($0.rawValue) " } ?? ""
        return "\(mutant)make simulate-mutants SEED=\(seed)"
        #else
        return "make simulate SEED=\(seed)"
        #endif
    }

    @Test func seededClusterRunsKeepTheInvariants() async throws {
        if let replay = Self.environment("SEED").flatMap(UInt64.init) {
            let simulation = ClusterSimulation(seed: replay, tracing: true)
            let violations = simulation.run()
            print((simulation.trace ?? []).joined(separator: "\n"))
            print(violations.isEmpty ? "seed \(replay): every invariant held" : violations.joined(separator: "\n"))
            #expect(violations.isEmpty, "\(violations.first ?? "")")
            return
        }
        let count = Self.environment("SEEDS").flatMap(UInt64.init) ?? UInt64(Self.defaultSeeds)
        let start = ContinuousClock.now
        let failure = try await Self.firstFailure(in: 1...max(1, count))
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        if let failure {
            print("seed \(failure.seed) breaks an invariant: \(failure.violations[0])")
            print("replay it: \(Self.replayCommand(failure.seed))")
            Issue.record("seed \(failure.seed): \(failure.violations[0]); replay: \(Self.replayCommand(failure.seed))")
        } else {
            let rate = Double(count) / max(seconds, 0.001)
            print("cluster simulation: \(count) seeds, every invariant held, \(String(format: "%.1f", rate)) seeds/s")
        }
    }

    #if LOCKSTEP_MUTANTS
    /// Each planted bug, in turn, over seeds until one breaks an invariant (`MUTANT_SEEDS` at most, 800 by default):
    /// prints a table, and fails if a mutant survives them all.
    @Test func everyPlantedBugIsCaught() async throws {
        guard Self.environment("SIMULATE_MUTANTS") != nil else { return }
        let limit = Self.environment("MUTANT_SEEDS").flatMap(UInt64.init) ?? 800
        var rows: [String] = []
        var survivors: [String] = []
        let width = Mutant.allCases.map(\.rawValue.count).max()! + 1
        for mutant in Mutant.allCases {
            setenv("LOCKSTEP_MUTANT", mutant.rawValue, 1)
            let failure = try await Self.firstFailure(in: 1...limit)
            unsetenv("LOCKSTEP_MUTANT")
            let name = mutant.rawValue.padding(toLength: width, withPad: " ", startingAt: 0)
            if let failure {
                rows.append("\(name) yes     seed \(failure.seed)   \(failure.violations[0])")
            } else {
                rows.append("\(name) NO      \(limit) seeds passed")
                survivors.append(mutant.rawValue)
            }
        }
        print("mutant".padding(toLength: width, withPad: " ", startingAt: 0) + " caught  seeds   first violation")
        print(rows.joined(separator: "\n"))
        #expect(survivors.isEmpty, "not caught: \(survivors)")
    }
    #endif
}

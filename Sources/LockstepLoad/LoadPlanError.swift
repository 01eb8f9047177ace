/// Why a ``LoadPlan`` cannot run: two settings contradict each other, or one is out of range. The description names
/// the `lockstep load` option at fault, so the command can show it as is.
public struct LoadPlanError: Error, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `--writers must be 1...--clients`.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

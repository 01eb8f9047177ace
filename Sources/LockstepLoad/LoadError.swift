/// Why a load run could not run at all (as opposed to a run that measured failures: ``LoadReport/passed``).
public enum LoadError: Error, CustomStringConvertible {
    /// The plan failed ``LoadPlan/validate()``.
    case invalidPlan(LoadPlanError)
    /// A client context, a worker process or the pipe to it failed.
    case transport(String)
    /// Sockets neither opened nor failed in time, or none opened.
    case connect(String)
    /// The setup actions of views or private parts were refused or unanswered.
    case setup(String)
    /// ``LoadLayout/mintTokens`` failed; shown as its own error.
    case tokens(any Error)

    /// The message `lockstep load` prints, with a hint at the likely cause.
    public var description: String {
        switch self {
        case .invalidPlan(let error): "load: \(error)"
        case .transport(let message): "load: \(message)"
        case .connect(let message):
            "load: \(message); is the server running, and is --clients within its --max-connections?"
        case .setup(let message):
            "load: setting up the room failed: \(message); is the server's --app json, on a fresh room, and "
                + "does its --private pattern match --private-part?"
        case .tokens(let error): String(describing: error)
        }
    }
}

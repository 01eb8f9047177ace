import ArgumentParser

/// What one property of a command is to the parser, read off its property wrapper: it tells how an environment
/// variable becomes arguments (see ``EnvironmentOptions``).
enum ArgumentKind {
    /// `--name VALUE`.
    case value
    /// `--name VALUE`, repeatable; the variable holds the values separated by commas.
    case repeating
    /// `--name` alone; the variable holds true or false.
    case flag
    /// The options of another `ParsableArguments` type, included with `@OptionGroup`.
    case group(any ParsableArguments.Type)
}

/// An ArgumentParser property wrapper that says which ``ArgumentKind`` it is.
protocol ArgumentKindReporting {
    static var argumentKind: ArgumentKind { get }
}

/// The type of a repeatable option's value (`@Option var origin: [String]`).
protocol RepeatableValue {}

extension Array: RepeatableValue {}

extension Option: ArgumentKindReporting {
    static var argumentKind: ArgumentKind { Value.self is any RepeatableValue.Type ? .repeating : .value }
}

extension Flag: ArgumentKindReporting {
    static var argumentKind: ArgumentKind { .flag }
}

extension OptionGroup: ArgumentKindReporting {
    static var argumentKind: ArgumentKind { .group(Value.self) }
}

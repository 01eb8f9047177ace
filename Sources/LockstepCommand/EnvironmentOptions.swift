import ArgumentParser
import Configuration

/// Options of a command taken from environment variables, as container platforms and systemd units give them: each
/// `--some-option` of `lockstep serve` is also `LOCKSTEP_SOME_OPTION`. An option given on the command line wins over
/// its variable.
///
/// The variables become arguments before parsing, so their values are parsed and validated exactly as flags are:
/// `LOCKSTEP_PORT=9000` adds `--port 9000`, `LOCKSTEP_ALLOWED_ORIGIN=https://a,https://b` adds `--allowed-origin`
/// twice, `LOCKSTEP_MEMORY=true` (or 1, yes) adds `--memory`. The option names are read off the command's properties
/// (as the parser itself does), so a new option has its variable with no list to keep.
struct EnvironmentOptions {
    /// One option that can come from the environment.
    struct Option {
        /// Its long name, without dashes: `max-connections-per-ip`.
        let name: String
        let kind: ArgumentKind

        /// `LOCKSTEP_MAX_CONNECTIONS_PER_IP`.
        var variable: String {
            EnvironmentOptions.prefix.uppercased() + "_" + name.uppercased().replacing("-", with: "_")
        }
    }

    static let prefix = "lockstep"
    /// Variables whose values are never printed (swift-configuration redacts them too).
    static let secrets: Set<String> = ["LOCKSTEP_AUTH_SECRET", "LOCKSTEP_POSTGRES"]

    /// Every option of `command`, those of its option groups included.
    let options: [Option]
    private let reader: ConfigReader

    init(command: any ParsableArguments.Type, environment: [String: String]) {
        options = Self.options(of: command)
        reader = ConfigReader(
            provider: EnvironmentVariablesProvider(
                environmentVariables: environment, secretsSpecifier: .specific(Self.secrets)))
    }

    /// `arguments` with every option they lack that has its variable set, and the variables used.
    func completing(_ arguments: [String]) throws(EnvironmentOptionsError) -> (arguments: [String], used: [String]) {
        var completed = arguments
        var used: [String] = []
        for option in options where !Self.names(option.name, in: arguments) {
            let key = ConfigKey([Self.prefix, option.name])
            let secret = Self.secrets.contains(option.variable)
            guard let text = reader.string(forKey: key, isSecret: secret) else { continue }
            switch option.kind {
            case .value:
                completed += ["--\(option.name)", text]
            case .repeating:
                let values = reader.stringArray(forKey: key, isSecret: secret) ?? [text]
                for value in values where !value.isEmpty { completed += ["--\(option.name)", value] }
            case .flag:
                guard let on = try? reader.requiredBool(forKey: key) else {
                    throw .notABoolean(variable: option.variable, value: text)
                }
                if on {
                    completed.append("--\(option.name)")
                } else if Self.onByDefault.contains(option.name) {
                    completed.append("--no-\(option.name)")
                }
            case .group:
                continue
            }
            used.append(option.variable)
        }
        return (completed, used)
    }

    /// Flags that are on unless turned off (`--no-compression`): their variable set to false gives the `--no-` form.
    static let onByDefault: Set<String> = ["compression"]

    /// Whether `arguments` give `--name`, as `--name VALUE` or `--name=VALUE`.
    private static func names(_ name: String, in arguments: [String]) -> Bool {
        arguments.contains { $0 == "--\(name)" || $0 == "--no-\(name)" || $0.hasPrefix("--\(name)=") }
    }

    /// The options of `command`, read off its properties the way ArgumentParser reads them: a property
    /// `maxConnectionsPerIp` is the option `--max-connections-per-ip`.
    static func options(of command: any ParsableArguments.Type) -> [Option] {
        Mirror(reflecting: command.init()).children.flatMap { child -> [Option] in
            guard let label = child.label?.dropFirst(),
                let kind = (type(of: child.value) as? any ArgumentKindReporting.Type)?.argumentKind
            else { return [] }
            if case .group(let group) = kind { return options(of: group) }
            return [Option(name: kebabCased(String(label)), kind: kind)]
        }
    }

    private static func kebabCased(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase, !result.isEmpty { result.append("-") }
            result.append(contentsOf: character.lowercased())
        }
        return result
    }
}

/// An environment variable that cannot become an option; printed as is before the process exits.
enum EnvironmentOptionsError: Error, CustomStringConvertible {
    case notABoolean(variable: String, value: String)

    var description: String {
        switch self {
        case .notABoolean(let variable, let value):
            "\(variable)=\(value) is not a switch: set it to true or false (1 or 0, yes or no), or unset it"
        }
    }
}

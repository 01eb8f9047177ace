import Foundation

/// The path of an executable this package builds (`lockstep`, `lockstep-client`), next to the test bundle in the
/// build directory.
public func builtExecutable(_ name: String) throws -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
        directory.deleteLastPathComponent()
    }
    let fromBundle = Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name)
    guard FileManager.default.isExecutableFile(atPath: fromBundle.path) else {
        throw ChildProcessError.notBuilt(name)
    }
    return fromBundle.path
}

import Foundation
import LockstepJSON
import Logging

/// Writes each log event to stderr as one JSON object on one line (`--log-format json`):
/// `{"time":"2026-05-01T12:00:00.123Z","level":"info","label":"lockstep","message":"listening","port":"8080"}`.
///
/// Metadata are fields of the object beside `time`, `level`, `label` and `message`; a metadata key that would hide
/// one of those is written as `metadata.KEY`. Each line goes out in one write, so lines of several threads never mix.
struct JSONLogHandler: LogHandler {
    private static let reserved: Set<String> = ["time", "level", "label", "message", "source", "error"]

    let label: String
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .info

    init(label: String) {
        self.label = label
    }

    init(label: String, metadataProvider: Logger.MetadataProvider?) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        FileHandle.standardError.write(Data(line(for: event, at: Date())))
    }

    /// The event as one line of JSON, newline included.
    func line(for event: LogEvent, at time: Date) -> [UInt8] {
        var object: JSONObject = [
            "time": .string(time.formatted(Self.timeFormat)),
            "level": .string(event.level.rawValue),
            "label": .string(label),
            "message": .string(event.message.description),
        ]
        if let error = event.error { object["error"] = .string("\(error)") }
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let given = event.metadata { merged.merge(given) { $1 } }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            object[Self.reserved.contains(key) ? "metadata.\(key)" : key] = Self.json(value)
        }
        return JSON.object(object).serialized() + [UInt8(ascii: "\n")]
    }

    private static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    private static func json(_ value: Logger.Metadata.Value) -> JSON {
        switch value {
        case .string(let string):
            return .string(string)
        case .stringConvertible(let convertible):
            return .string(convertible.description)
        case .array(let values):
            return .array(values.map(json))
        case .dictionary(let members):
            var object = JSONObject()
            for (key, member) in members.sorted(by: { $0.key < $1.key }) { object[key] = json(member) }
            return .object(object)
        }
    }
}

import LockstepCore
import LockstepJSON
import Logging

/// The audit trail: at the debug level, one line per change of any room, with who caused it and the patch.
struct AuditTrail: Sendable {
    let logger: Logger
    /// The most of a patch or an action a line holds, in bytes (``ServerConfiguration/auditLimitBytes``).
    let limitBytes: Int

    /// Logs `change` of `room`; builds nothing unless the logger is at debug or below.
    func record(_ change: Change, in room: String, cause: Cause) {
        guard logger.logLevel <= .debug else { return }
        var metadata: Logger.Metadata = [
            "room": "\(room)", "version": "\(change.version)", "cause": "\(cause.kind.rawValue)",
            "patch": "\(text(change.patch.json))",
        ]
        if let client = cause.client { metadata["client"] = "\(client)" }
        if let id = cause.id { metadata["id"] = "\(id)" }
        if let action = cause.action { metadata["action"] = "\(text(action))" }
        if let of = cause.of { metadata["of"] = "\(of)" }
        if cause.mine { metadata["mine"] = "true" }
        if let at = cause.at { metadata["at"] = "\(at)" }
        if let name = cause.name { metadata["name"] = "\(name)" }
        if let sub = cause.sub { metadata["sub"] = "\(sub)" }
        logger.debug("change", metadata: metadata)
    }

    /// `json` as text, cut to `limitBytes` with a note of how much was left out.
    private func text(_ json: JSON) -> String {
        let bytes = json.serialized()
        guard bytes.count > limitBytes else { return String(decoding: bytes, as: UTF8.self) }
        // Cut at a character boundary: UTF-8 continuation bytes are 0b10xxxxxx.
        var end = limitBytes
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return String(decoding: bytes[..<end], as: UTF8.self) + "… (\(bytes.count - end) more bytes)"
    }
}

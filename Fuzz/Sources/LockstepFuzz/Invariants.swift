import LockstepCore
import LockstepJSON

/// What must hold for any input, not merely "no crash".
///
/// An input that parses as a JSON array `[document, patch, target?]` also exercises the patch engine.
enum Invariants {
    static func check(_ bytes: [UInt8]) {
        checkMessage(bytes)
        guard let json = try? JSON(parsing: bytes) else { return }
        checkRoundTrip(json)
        if case .array(let parts) = json, parts.count >= 2 {
            checkPatch(document: parts[0], patch: parts[1], target: parts.count > 2 ? parts[2] : nil)
        }
        // Any two documents diff into a patch that reaches the second.
        if case .array(let parts) = json, parts.count == 2 { checkDiff(from: parts[0], to: parts[1]) }
    }

    /// Parse → serialize → parse gives the same value, and serializing is deterministic.
    static func checkRoundTrip(_ json: JSON) {
        let text = json.serialized()
        guard let again = try? JSON(parsing: text) else { fail("serialized JSON does not parse: \(text)") }
        require(again == json, "round trip changed the value")
        require(again.serialized() == text, "serializing twice gave different bytes")
    }

    /// A decoded client message re-encodes to the same message.
    static func checkMessage(_ bytes: [UInt8]) {
        guard let message = try? ClientMessage(parsing: bytes) else { return }
        guard let again = try? ClientMessage(json: message.json) else { fail("a message's own JSON is refused") }
        require(again == message, "message round trip changed it")
    }

    /// Applying either succeeds, and its inverse restores the document, or fails and leaves it untouched.
    static func checkPatch(document: JSON, patch patchJSON: JSON, target: JSON?) {
        guard let patch = try? JSONPatch(json: patchJSON) else { return }
        guard let reparsed = try? JSONPatch(json: patch.json) else { fail("a patch's own JSON is refused") }
        require(reparsed == patch, "patch round trip changed it")

        let before = document.serialized()
        var working = document
        do {
            let undo = try patch.apply(to: &working)
            var restored = working
            do {
                try undo.apply(to: &restored)
            } catch {
                fail("the inverse patch failed: \(error)")
            }
            require(restored == document, "the inverse patch did not restore the document")
            checkDiff(from: document, to: working)
        } catch {
            require(working.serialized() == before, "a failed patch changed the document")
        }
        if let target { checkDiff(from: document, to: target) }
    }

    /// The diff from `old` to `new` applies to `old` and gives `new`.
    static func checkDiff(from old: JSON, to new: JSON) {
        let diff = JSONPatch(from: old, to: new)
        do {
            require(try diff.applied(to: old) == new, "the diff does not reach its target")
        } catch {
            fail("the diff does not apply: \(error)")
        }
        require(old != new || diff.isEmpty, "equal documents gave a non-empty diff")
    }

    static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }

    static func fail(_ message: String) -> Never {
        fatalError("invariant broken: \(message)")
    }
}

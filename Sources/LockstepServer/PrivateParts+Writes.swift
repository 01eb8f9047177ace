import LockstepCore
import LockstepJSON

extension PrivateParts {
    /// A reducer context's refusal for `subject`'s changes (forward and inverse) under these parts: nothing inside
    /// another's private subtree, nothing over an ancestor holding one (the inverse carries what was there), and no
    /// value carrying one.
    func writeRefusal(by subject: String?) -> @Sendable (JSONPatch, JSONPatch) -> String? {
        { forward, inverse in
            for operation in forward.operations + inverse.operations {
                if let refusal = writeRefusal(of: operation, by: subject) { return refusal }
            }
            return nil
        }
    }

    /// Why `operation` touches someone else's private part, or nil: its places (`path`, `from`, a `test`'s too) and
    /// the value it carries.
    private func writeRefusal(of operation: PatchOperation, by subject: String?) -> String? {
        for place in operation.places where hides(place, from: subject) {
            return "\(place) is someone else's private part of the room"
        }
        switch operation {
        case .add(let path, let value), .replace(let path, let value), .test(let path, let value):
            guard redact(value, at: path, for: subject) == value else {
                return "\(path) holds someone else's private part of the room"
            }
        default:
            break
        }
        return nil
    }
}

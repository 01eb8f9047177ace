public import LockstepCore
public import LockstepJSON

/// The `json` app, the default: the state is any JSON document, changed by JSON Patch actions.
///
/// Lets clients share data without writing a reducer. A patch applies atomically: if any of its
/// operations fails (a failed `test` included) nothing changes and the sender gets `rejected`.
/// It applies in place and is recorded as performed, so a change costs what the patch does, not
/// what the document holds: no copy, comparison or diff of the document.
public struct JSONDocument: PatchingReducer {
    public typealias State = JSON

    /// `{"type":"patch","ops":[RFC 6902 operations]}`
    public struct Action: Codable, Equatable, Sendable {
        /// The action's `ops`: RFC 6902 operations, applied to the document all together or not at all.
        public var ops: JSONPatch

        /// An action that applies `ops` to the document.
        public init(ops: JSONPatch) {
            self.ops = ops
        }

        private enum CodingKeys: String, CodingKey {
            case type, ops
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let type = try container.decode(String.self, forKey: .type)
            guard type == "patch" else { throw ActionType.unknown(type, container: container, codingKey: .type) }
            let ops = try container.decode(JSON.self, forKey: .ops)
            do {
                self.ops = try JSONPatch(json: ops)
            } catch {
                throw DecodingError.dataCorruptedError(
                    forKey: .ops, in: container, debugDescription: "\(error)"
                )
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("patch", forKey: .type)
            try container.encode(ops.json, forKey: .ops)
        }
    }

    /// The `json` app, as `--app json` (the default) runs it.
    public init() {}

    public var initialState: JSON { .object([:]) }

    public func patch(_ state: inout JSON, with action: Action) throws(Rejection) -> Reduction<Action> {
        do {
            return Reduction(try action.ops.applyRecording(to: &state))
        } catch {
            throw Rejection("\(error)")
        }
    }
}

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

    /// The deepest the document may nest containers: as deep as a message may (the parser's default `maxDepth`), so
    /// every state can be written out, stored and read back, and no client can nest values one inside another until
    /// the server runs out of stack.
    public static let maxDepth = 512

    /// The most one patch may write, in bytes as the change is sent (a `copy` writes the value it copies; a `move`
    /// into a deeper place counts what it moves): a patch of a few kilobytes that copies the document into itself
    /// again and again would otherwise double it with every operation.
    public let maxChangeBytes: Int

    /// `maxChangeBytes` unless told otherwise (`lockstep serve --max-change`): 16 MiB.
    public static let defaultMaxChangeBytes = 16 << 20

    /// The `json` app, as `--app json` (the default) runs it; `maxChangeBytes` bounds what one patch writes.
    public init(maxChangeBytes: Int = defaultMaxChangeBytes) {
        self.maxChangeBytes = maxChangeBytes
    }

    public var initialState: JSON { .object([:]) }

    public func patch(_ state: inout JSON, with action: Action) throws(Rejection) -> Reduction<Action> {
        let applied: AppliedPatch
        do {
            applied = try action.ops.applyRecording(to: &state)
        } catch {
            throw Rejection("\(error)")
        }
        if let excess = excess(of: applied.forward, in: state) {
            _ = try? applied.inverse.apply(to: &state)
            throw Rejection(excess)
        }
        return Reduction(applied)
    }

    /// Why the change `forward` made to `state` is refused, if it is: a value written deeper than ``maxDepth``, or
    /// more written than ``maxChangeBytes``.
    private func excess(of forward: JSONPatch, in state: JSON) -> String? {
        var budget = maxChangeBytes
        for operation in forward.operations {
            let written: JSON
            switch operation {
            case .add(_, let value), .replace(_, let value):
                written = value
            case .move(let from, let path) where path.tokens.count > from.tokens.count:
                // Moved deeper: only then can it pass the depth limit.
                guard let moved = state.value(at: path) else { continue }
                written = moved
            default:
                continue
            }
            let depth = Self.maxDepth - operation.path.tokens.count
            if depth < 0 || written.exceeds(depth: depth, budget: &budget) {
                guard budget < 0 else {
                    return "\(operation.path) would nest containers deeper than \(Self.maxDepth) levels"
                }
                return "the patch writes more than \(maxChangeBytes) bytes"
            }
        }
        return nil
    }
}

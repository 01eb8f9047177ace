import LockstepJSON

/// The JSON of a scalar Swift value, found without going through an `Encoder`.
///
/// Scalars are most of what changes in a state; recognising them directly keeps a counter
/// action far below a microsecond.
struct LeafValue {
    let json: JSON

    init?(_ value: some Encodable) {
        switch value {
        case let value as Int: json = .int(value)
        case let value as String: json = .string(value)
        case let value as Bool: json = .bool(value)
        case let value as Double where value.isFinite: json = .double(value)
        default: return nil
        }
    }
}

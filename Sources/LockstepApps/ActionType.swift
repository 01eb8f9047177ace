/// Decoding help for actions written as `{"type": NAME, ...}`, the shape every built-in app uses.
public enum ActionType {
    /// The error for a `type` the app does not know, naming it.
    public static func unknown<Key: CodingKey>(
        _ type: String, container: KeyedDecodingContainer<Key>, codingKey: Key
    ) -> DecodingError {
        DecodingError.dataCorruptedError(
            forKey: codingKey, in: container, debugDescription: "unknown action type \"\(type)\""
        )
    }
}

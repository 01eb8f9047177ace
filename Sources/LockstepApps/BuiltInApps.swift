public import LockstepCore

extension App {
    /// Any JSON document, changed by JSON Patch actions (the default).
    public static let json = json(maxChangeBytes: JSONDocument.defaultMaxChangeBytes)
    /// The same, one patch writing at most `maxChangeBytes`.
    public static func json(maxChangeBytes: Int) -> App {
        App(
            "json", summary: "any JSON document, changed by RFC 6902 patches",
            reducer: JSONDocument(maxChangeBytes: maxChangeBytes))
    }
    /// One shared number.
    public static let counter = App("counter", summary: "a shared number", reducer: Counter())
    /// A shared to-do list.
    public static let todos = App("todos", summary: "a shared to-do list", reducer: Todos())

    /// The apps every server knows, by name.
    public static let builtIn: [App] = [.json, .counter, .todos]
}

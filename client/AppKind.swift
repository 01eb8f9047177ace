import LockstepJSON

/// Which built-in app a room runs, so the prompt can offer its short commands (`+`, `toggle 3`, `set /a 1`).
enum AppKind: String, CaseIterable, Sendable {
    case json, counter, todos

    /// Guesses the app from a snapshot's state: `{"count":N}` is a counter, `{"items":[...],"nextId":N}` is todos,
    /// anything else is a JSON document. `--app` overrides a wrong guess.
    init(detectingFrom state: JSON) {
        if let object = state.objectValue {
            if object.count == 1, object["count"]?.intValue != nil {
                self = .counter
                return
            }
            if object.count == 2, object["items"]?.arrayValue != nil, object["nextId"]?.intValue != nil {
                self = .todos
                return
            }
        }
        self = .json
    }

    /// The commands this app adds to the common ones, one per line, for `help`.
    var helpLines: [String] {
        switch self {
        case .counter: ["+  -  add N  reset"]
        case .todos: ["add TITLE  toggle ID  rename ID TITLE  remove ID  clear (completed)"]
        case .json:
            [
                "set /path VALUE  add /path VALUE  remove /path  inc /path [N]",
                "VALUE is JSON; a bare word is a string. inc = test + replace (fails if changed meanwhile)",
            ]
        }
    }

    /// The commands of every app, one per line, for `help`; each fits an 80-column screen.
    static let commonHelp = [
        "undo [mine]  redo [mine]  revert V  view V  log [N]  raw {action}  help  quit",
        "undo mine / redo mine: only your own changes (by session); others' stay",
        "later SECONDS [as NAME] COMMAND: the server runs it then  timers  cancel NAME",
    ]
}

import LockstepApps
import LockstepCore
import LockstepJSON

/// The app of the simulation's rooms with private parts: the `json` app's patches on a document with a public board,
/// a hand for each subject that only it sees (`/hands/{sub}`) and a vault that no client sees (`/vault`).
///
/// What the simulation writes into a private part carries its owner's mark (`secret-u1-…` in `/hands/u1`, `vault-…`
/// in `/vault`) and never leaves it, so any frame that carries another's mark to a client is a leak.
struct HandsDocument: PatchingReducer {
    typealias State = JSON
    typealias Action = JSONDocument.Action

    static let subjects = ["u0", "u1", "u2"]

    static let app = App(
        "hands", summary: "a board, private hands and a vault", reducer: HandsDocument(),
        privateParts: try! PrivateParts(["/hands/{sub}", "/vault"]))

    var initialState: JSON {
        var hands = JSONObject()
        for subject in Self.subjects { hands[subject] = [:] }
        return ["board": [:], "hands": .object(hands), "vault": [:]]
    }

    func patch(
        _ state: inout JSON, with action: JSONDocument.Action
    ) throws(Rejection) -> Reduction<JSONDocument.Action> {
        try JSONDocument().patch(&state, with: action)
    }

    /// The mark that `reader` may not see in `text`, if `text` has one.
    static func leak(in text: String, to reader: String?) -> String? {
        if text.contains("vault-") { return "vault-" }
        return subjects.lazy.map { "secret-\($0)-" }.first { $0 != "secret-\(reader ?? "")-" && text.contains($0) }
    }
}

import LockstepCore
import LockstepTransport

/// The pages for people: the rooms in memory, and each room's inspector.
enum InspectorPages {
    /// `GET /` and `GET /inspect/ROOM`, or nil for any other path.
    static func response(to request: HTTPRequest, rooms: some Collection<Room>) -> HTTPResponse? {
        if request.path == "/" { return roomList(rooms, token: request.query["token"]) }
        guard request.path.hasPrefix("/inspect/") else { return nil }
        guard RoomName(String(request.path.dropFirst("/inspect/".count))) != nil else {
            return HTTPResponse(status: 400, text: RoomName.rule + "\n")
        }
        return WebAssets.inspector
    }

    /// The rooms in memory, each with its version, its number of clients and a link to its inspector (the page's
    /// `token`, if any, passed on).
    private static func roomList(_ rooms: some Collection<Room>, token: String?) -> HTTPResponse {
        // A JWT is base64url and dots: nothing in it needs escaping in a URL or in HTML, and nothing else is kept.
        let suffix = token.map { token in
            "?token=" + token.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
        }
        let rows = rooms.sorted { $0.name < $1.name }.map { room in
            "<tr><td><a href=\"/inspect/\(room.name)\(suffix ?? "")\">\(room.name)</a></td>"
                + "<td>\(room.engine.store.version)</td><td>\(room.sessions.count)</td></tr>"
        }
        let body = """
            <!doctype html><html lang="en"><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1"><title>Lockstep rooms</title>
            <style>body{font:14px/1.4 system-ui,sans-serif;margin:1rem}table{border-collapse:collapse}
            td,th{border-bottom:1px solid #d0d4dc;padding:.3rem 1rem .3rem 0;text-align:left}</style>
            <h1>Rooms in memory</h1>
            \(rows.isEmpty ? "<p>No room is in memory.</p>" : """
                <table><thead><tr><th scope="col">Room</th><th scope="col">Version</th>\
                <th scope="col">Clients</th></tr></thead><tbody>\(rows.joined())</tbody></table>
                """)
            </html>
            """
        return HTTPResponse(status: 200, text: body, contentType: "text/html; charset=utf-8")
    }
}

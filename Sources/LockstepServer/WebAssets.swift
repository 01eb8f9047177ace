import Foundation
import LockstepTransport

/// The files the server hands to browsers, shipped as the package's resources and read once.
enum WebAssets {
    /// `GET /lockstep.js`: the JavaScript client, importable from any page (CORS allows every origin: the module holds
    /// no secret, and which pages may then connect is decided by the WebSocket handshake's origin check).
    /// `X-TypeScript-Types` points Deno at the declarations; TypeScript finds them beside a saved copy.
    static let javascriptClient = response(
        "lockstep", "js", contentType: "text/javascript; charset=utf-8",
        headers: ["Access-Control-Allow-Origin": "*", "X-TypeScript-Types": "/lockstep.d.ts"])

    /// `GET /lockstep.d.ts`: the client's TypeScript declarations.
    static let typeDeclarations = response(
        "lockstep.d", "ts", contentType: "application/typescript; charset=utf-8",
        headers: ["Access-Control-Allow-Origin": "*"])

    /// `GET /inspect/ROOM`: the inspector page; it reads the room from its own path and connects like any client.
    static let inspector = response("inspect", "html", contentType: "text/html; charset=utf-8")

    private static func response(
        _ name: String, _ fileExtension: String, contentType: String, headers: [String: String] = [:]
    ) -> HTTPResponse {
        guard let url = Bundle.module.url(forResource: name, withExtension: fileExtension, subdirectory: "Web"),
            let bytes = try? Data(contentsOf: url)
        else {
            return HTTPResponse(status: 500, text: "\(name).\(fileExtension) is missing from this installation\n")
        }
        return HTTPResponse(
            status: 200, contentType: contentType, body: Array(bytes),
            headers: headers.merging(["Cache-Control": "no-cache"]) { first, _ in first })
    }
}

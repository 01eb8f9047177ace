import Foundation
import LockstepTransport

/// The files the server hands to browsers, shipped as the package's resources and read once.
enum WebAssets {
    /// `GET /lockstep.js`: the JavaScript client, importable from any page (CORS allows every origin: the module holds
    /// no secret, and which pages may then connect is decided by the WebSocket handshake's origin check).
    static let javascriptClient: HTTPResponse = {
        guard let url = Bundle.module.url(forResource: "lockstep", withExtension: "js", subdirectory: "Web"),
            let bytes = try? Data(contentsOf: url)
        else {
            return HTTPResponse(status: 500, text: "lockstep.js is missing from this installation\n")
        }
        return HTTPResponse(
            status: 200, contentType: "text/javascript; charset=utf-8", body: Array(bytes),
            headers: ["Access-Control-Allow-Origin": "*", "Cache-Control": "no-cache"])
    }()
}

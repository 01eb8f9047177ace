import LockstepTransport

extension HTTPResponse {
    /// The answer to a browser's preflight from an allowed origin (`cors`): what the path takes.
    static func preflight(_ cors: [String: String], methods: String, headers: String) -> HTTPResponse {
        var response = HTTPResponse(status: 204, headers: cors)
        response.headers["Access-Control-Allow-Methods"] = methods
        response.headers["Access-Control-Allow-Headers"] = headers
        return response
    }
}

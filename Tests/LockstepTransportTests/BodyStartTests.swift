import Testing
@testable import LockstepTransport

/// How the first piece of a body tells a request sent before the answer ahead of it
/// (`MalformedRequest.checkBodyStart`): libwebsockets hands such a request its own head as its body, so a body that
/// starts as the head does (method and space, or as much of them as the piece holds) is refused; any JSON body goes on.
struct BodyStartTests {
    @Test(arguments: ["POST /rooms/test HTTP/1.1\r\nHost: x\r\n", "POST ", "PO", "P"])
    func aBodyStartingAsItsHeadIsRefused(first: String) {
        #expect(check(first, method: "POST") == .pipelinedBody)
    }

    @Test(arguments: [
        #"{"type":"action"}"#, "{", " {", "\n{}", "[]", #""POST ""#, "POSTS", "PUT /rooms/a", "post /", "",
    ])
    func anyOtherBodyGoesOn(first: String) {
        #expect(check(first, method: "POST") == nil)
    }

    @Test func theMethodIsTheRequestsOwn() {
        #expect(check("PUT /rooms/a HTTP/1.1", method: "PUT") == .pipelinedBody)
        #expect(check("PATCH", method: "PATCH") == .pipelinedBody)
    }

    private func check(_ first: String, method: String) -> MalformedRequest? {
        Array(first.utf8).withUnsafeBytes { MalformedRequest.checkBodyStart($0, method: method) }
    }
}

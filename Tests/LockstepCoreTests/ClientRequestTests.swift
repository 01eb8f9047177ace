import LockstepCore
import LockstepJSON
import Testing

/// Numbers in client messages are JSON numbers: a count or version with an exact integer value reads the same
/// whether it was written `5` or `5.0`, in every field alike; any other number is `bad_message`.
@Suite struct ClientRequestTests {
    static func request(_ text: String) throws -> ClientRequest {
        try ClientRequest(json: try JSON(parsing: Array(text.utf8)))
    }

    @Test func integerFieldsAcceptExactIntegersWrittenAsDecimals() throws {
        #expect(try Self.request(#"{"type":"history","id":"h","limit":5.0}"#).message == .history(id: "h", limit: 5))
        #expect(try Self.request(#"{"type":"history","id":"h","limit":5}"#).message == .history(id: "h", limit: 5))
        #expect(try Self.request(#"{"type":"undo","id":"u","seq":3.0}"#).seq == 3)
        #expect(try Self.request(#"{"type":"revert","id":"r","to":2.0}"#).message == .revert(id: "r", to: 2))
    }

    @Test(arguments: [
        #"{"type":"history","id":"h","limit":1.5}"#, #"{"type":"history","id":"h","limit":-1}"#,
        #"{"type":"history","id":"h","limit":"5"}"#, #"{"type":"undo","id":"u","seq":1.5}"#,
        #"{"type":"undo","id":"u","seq":0}"#,
    ])
    func otherNumbersAreBadMessages(text: String) throws {
        #expect(throws: WireError.self) { try Self.request(text) }
    }
}

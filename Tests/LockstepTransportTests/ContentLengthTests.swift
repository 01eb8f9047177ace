import Testing
@testable import LockstepTransport

/// How a `Content-Length` value is read (`MalformedRequest.bodyLength`): digits only, spaces and tabs around them, at
/// most 18 of them; anything else is no length.
struct ContentLengthTests {
    @Test(arguments: [
        ("47", 47), ("0", 0), (" \t47 \t", 47), ("000012", 12), ("999999999999999999", 999_999_999_999_999_999),
    ])
    func aNumberIsItsLength(value: String, length: Int) {
        #expect(MalformedRequest.bodyLength(value) == length)
    }

    @Test(arguments: ["", "  ", "abc", "-5", "+47", "4 7", "47, 47", "47,47", "0x2f", "1000000000000000000", "47\r"])
    func anythingElseIsNoLength(value: String) {
        #expect(MalformedRequest.bodyLength(value) == nil)
    }
}

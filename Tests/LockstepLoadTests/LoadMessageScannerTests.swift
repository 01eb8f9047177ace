@testable import LockstepLoad
import Testing

/// The generator's scan for a patch's version and cause id, on messages as the server writes them and on tails full
/// of the letter the backward search looks for.
@Suite struct LoadMessageScannerTests {
    private func scan<T>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        Array(text.utf8).withUnsafeBufferPointer(body)
    }

    private func causeID(_ text: String) -> LoadMessageScanner.ActionID? {
        scan(text) { bytes in
            guard let version = LoadMessageScanner.version(in: bytes) else { return nil }
            return LoadMessageScanner.causeID(in: bytes, from: version.end)
        }
    }

    @Test func aPatchsVersionAndCauseID() throws {
        let message =
            #"{"type":"patch","version":13,"ops":[{"op":"replace","path":"/count","value":13}],"#
            + #""cause":{"kind":"action","client":"c3","id":"w4-27-1234567890123","action":{"type":"increment"},"#
            + #""author":"session=w","at":1764000000000},"undo":4,"redo":0}"#
        #expect(scan(message) { LoadMessageScanner.kind(of: $0) } == .patch)
        #expect(scan(message) { LoadMessageScanner.version(in: $0)?.value } == 13)
        let id = try #require(causeID(message))
        #expect((id.writer, id.sequence, id.scheduledNanos) == (4, 27, 1_234_567_890_123))
    }

    /// Every length of tail after the id, each byte a `w` or not, so that each of the eight positions in a word and
    /// the bytes before the last whole word are where the nearest `w` is.
    @Test(arguments: 0..<24) func theLastIDIsFoundBehindATailOfLength(tail: Int) throws {
        for pattern in ["w", "ww-", "xyzwvu", "\"id\":\"x"] {
            let filler = String(repeating: pattern, count: tail).prefix(tail)
            let message = #"{"type":"patch","version":1,"cause":{"id":"w1-2-3"}"# + filler
            let id = try #require(causeID(message), "tail \(filler)")
            #expect((id.writer, id.sequence, id.scheduledNanos) == (1, 2, 3))
        }
    }

    @Test func anIDBeforeTheVersionIsNotTheCause() {
        #expect(causeID(#"{"type":"patch","id":"w1-2-3","version":1,"cause":{"kind":"reset"},"undo":0}"#) == nil)
        #expect(causeID(#"{"type":"patch","version":1,"cause":{"id":"other"},"undo":0,"wwwwwwwwwwwwwwww":1}"#) == nil)
    }
}

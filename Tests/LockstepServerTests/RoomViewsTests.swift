import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepTransport
import Testing

/// What each change is to each view of a room, decided with no server: the streams it reaches, their frames, the
/// forms readers who see it otherwise get, what a resuming client missed; and the room's resume window.
struct RoomViewsTests {
    static let parts = try! PrivateParts(["/hands/{sub}"])
    static let before: JSON = ["board": ["a": 1], "hands": ["u1": ["card": "ace"], "u2": [:]]]

    /// A room's views with `readers` (subject, or nil) following the whole room, opened at version 1.
    static func views(_ readers: [String?], at path: String = "") -> RoomViews {
        var views = RoomViews(parts: parts, resumeWindow: 3)
        for reader in readers {
            let view = sight(reader, at: path)
            views.open(view, version: 1) { before }
            views.admit(view, version: 1)
        }
        return views
    }

    static func sight(_ reader: String?, at path: String = "") -> RoomView {
        RoomView(path: PathView(path: try! JSONPointer(path)), reader: reader, redacts: true)
    }

    /// `ops` applied to ``before`` as the change of version 2, projected.
    static func project(
        _ ops: JSONPatch, action: JSON? = nil, in views: inout RoomViews
    ) throws -> [RoomView: RoomViews.Frames] {
        var after = before
        _ = try ops.apply(to: &after)
        let cause = Cause(kind: .action, client: "c1", id: "x", action: action)
        let message = ServerMessage.patch(version: 2, ops: ops, cause: cause, undo: 1, redo: 0)
        return views.project(
            ops, version: 2, cause: cause, undo: 1, redo: 0, touched: parts.touched(by: ops, action: action),
            frame: OutboundFrame(text: message.serialized()), after: { after })
    }

    /// The operations and action of the frame `reader`'s clients of the stream `key` get; nil when nothing.
    static func seen(
        by reader: String?, of key: RoomView, in frames: [RoomView: RoomViews.Frames]
    ) throws -> (ops: JSON, action: JSON?)? {
        guard let frame = frames[key]?.frame(for: reader) else { return nil }
        let message = try JSON(parsing: frame.payload)
        return (message["ops"] ?? .null, message["cause"]?["action"])
    }

    @Test func readersOfThePublicRoomShareAStreamAndAnOwnerGetsItsOwnFormOfAChangeToItsHand() throws {
        var views = Self.views(["u1", "u2", nil])
        let shared = Self.sight(nil)
        #expect(views.streams.count == 1 && views.streams[shared]?.clients == 3)

        let ops = try JSONPatch(json: [
            ["op": "replace", "path": "/board/a", "value": 2], ["op": "add", "path": "/hands/u1/card", "value": "king"],
        ])
        let action: JSON = ["type": "patch"]
        let frames = try Self.project(ops, action: action, in: &views)
        let owner = try #require(try Self.seen(by: "u1", of: shared, in: frames))
        #expect(owner.ops == ops.json && owner.action == action)
        for reader in ["u2", nil] as [String?] {
            let other = try #require(try Self.seen(by: reader, of: shared, in: frames))
            #expect(other.ops == [["op": "replace", "path": "/board/a", "value": 2]])
            #expect(other.action == nil, "the action wrote into u1's hand")
        }
    }

    @Test func aChangeWhollyInsideAHandReachesOnlyItsOwnersStreams() throws {
        var views = Self.views(["u2"], at: "/board")
        let hand = Self.sight("u1", at: "/hands/u1")
        views.open(hand, version: 1) { Self.before }
        views.admit(hand, version: 1)
        #expect(views.key(of: hand) == hand, "a view inside a hand is its owner's alone")

        let ops = try JSONPatch(json: [["op": "add", "path": "/hands/u1/card", "value": "king"]])
        let frames = try Self.project(ops, in: &views)
        #expect(frames.keys.map { $0 } == [hand])
        #expect(try Self.seen(by: "u1", of: hand, in: frames)?.ops == [["op": "add", "path": "/card", "value": "king"]])

        // Once u1's last client of it leaves, the stream closes and nothing is offered the change.
        let closed = views.dismiss(hand)
        #expect(closed)
        #expect(try Self.project(ops, in: &views).isEmpty)
    }

    @Test func aCopyIntoAHandReachesItsOwnerAloneAsTheViewItNowHas() throws {
        var views = Self.views(["u1", "u2"])
        let shared = Self.sight(nil)
        let ops = try JSONPatch(json: [["op": "copy", "from": "/board/a", "path": "/hands/u1/a"]])
        let frames = try Self.project(ops, in: &views)
        let owner = try #require(try Self.seen(by: "u1", of: shared, in: frames))
        let now: JSON = ["board": ["a": 1], "hands": ["u1": ["card": "ace", "a": 1]]]
        #expect(owner.ops == [["op": "replace", "path": "", "value": now]])
        #expect(try Self.seen(by: "u2", of: shared, in: frames) == nil)
    }

    @Test func aResumingReaderGetsItsOwnFramesFromWhenItJoinedAndTheWindowEnds() throws {
        var views = Self.views(["u1", "u2"])
        let shared = Self.sight(nil)
        let ops = try JSONPatch(json: [["op": "add", "path": "/hands/u1/card", "value": "king"]])
        views.release(try Self.project(ops, in: &views), version: 2)

        let u1 = try #require(views.patches(after: 1, released: 2, seenThrough: Self.sight("u1")))
        #expect(u1.count == 1)
        #expect(try JSON(parsing: u1[0].payload)["ops"] == ops.json)
        // Nothing of it for u2 (the shared stream's reader nil does not see it).
        #expect(views.patches(after: 1, released: 2, seenThrough: Self.sight("u2"))?.isEmpty == true)
        // A reader with no client on the stream at version 1 has no own frames from there.
        #expect(views.patches(after: 1, released: 2, seenThrough: Self.sight("u3")) == nil)
        // Before the stream was opened, or past what was released: the room's window or a snapshot instead.
        #expect(views.patches(after: 0, released: 2, seenThrough: Self.sight("u1")) == nil)
        #expect(views.patches(after: 3, released: 2, seenThrough: Self.sight("u1")) == nil)
        #expect(views.streams[shared]?.readers["u1"]?.since == 1)
    }

    @Test func aViewReadAgainAfterABatchIsTakenBackProjectsFromTheStateTheRoomHas() throws {
        var views = Self.views([nil], at: "/board")
        let key = Self.sight(nil, at: "/board")
        let ops = try JSONPatch(json: [["op": "replace", "path": "/board/a", "value": 2]])
        _ = try Self.project(ops, in: &views)
        #expect(views.streams[key]?.value.value == ["a": 2])
        views.reset(to: Self.before)
        #expect(views.streams[key]?.value.value == ["a": 1])
        // The same change again reaches the view, as a change of it.
        #expect(try Self.seen(by: nil, of: key, in: try Self.project(ops, in: &views))?.ops != nil)
    }

    @Test func theResumeWindowHoldsTheLastPatchesReleased() {
        var released = ReleasedPatches(version: 0, window: 2)
        #expect(released.patches(after: 0)?.isEmpty == true)
        for version in 1...3 {
            released.release(
                Room.LoggedPatch(version: version, cause: Cause(kind: .action), frame: OutboundFrame(text: [])))
        }
        #expect(released.version == 3)
        #expect(released.patches(after: 1)?.map(\.version) == [2, 3])
        #expect(released.patches(after: 3)?.isEmpty == true)
        #expect(released.patches(after: 0) == nil, "version 1 left the window")
        #expect(released.patches(after: 4) == nil)
        #expect(released.patches(after: -1) == nil)
    }
}

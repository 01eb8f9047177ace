import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import LockstepTransport
import Testing

/// A data directory on a disk that fills up: a write the log refuses acknowledges nothing, its room goes back to what
/// the log has, and the room goes on once there is room again.
@Suite(.timeLimit(.minutes(3))) struct DiskFullTests {
    /// An action of the `json` app writing `bytes` bytes under `/k<seq>`, numbered `seq` in the client's session.
    static func request(seq: Int, bytes: Int = 20_000) -> String {
        let value = String(repeating: "x", count: bytes)
        return #"{"type":"action","id":"a\#(seq)","seq":\#(seq),"action":{"type":"patch","ops":"#
            + #"[{"op":"add","path":"/k\#(seq)","value":"\#(value)"}]}}"#
    }

    @Test(.enabled(if: SmallFilesystem.isAvailable, "mounting a small filesystem needs root"))
    func aFullDiskAcknowledgesNothingUnstoredAndTheRoomGoesOnOnceThereIsRoom() async throws {
        let disk = try SmallFilesystem(bytes: 1 << 20)
        defer { disk.remove() }
        let sent = 200
        var acknowledged: [Int: Int] = [:]
        var stored = 0
        try await withStoredServer(in: disk.path, app: .json) { server in
            let client = try await SessionTests.connect(server, room: "full", session: "s1")
            _ = try await client.nextJSON(type: "snapshot")
            // 4 MB of changes for a 1 MB disk.
            for seq in 1...sent { client.sendRaw(Self.request(seq: seq)) }
            var notice: JSON?
            while notice == nil {
                let message: JSON
                do {
                    message = try await client.nextJSON()
                } catch {
                    // Says what the connection ended with, should it end before the notice.
                    let code = await client.closeCode().map { String($0) } ?? "none"
                    let reason = client.socket.closeReason
                    Issue.record("\(error) after \(acknowledged.count) acks: close \(code) \"\(reason)\"")
                    throw error
                }
                switch message["type"]?.stringValue {
                case "ack":
                    let seq = try #require(Int(message["id"]?.stringValue?.dropFirst() ?? ""))
                    acknowledged[seq] = message["version"]?.intValue
                case "error":
                    notice = message
                default:
                    continue
                }
            }
            #expect(notice?["code"] == "unavailable")
            #expect(notice?["id"] == nil)
            #expect(await client.closeCode() == 1011)
            // The acks are the first requests, in order, each its own version.
            #expect(!acknowledged.isEmpty && acknowledged.count < sent)
            #expect(acknowledged.keys.sorted() == Array(1...acknowledged.count))
            #expect(acknowledged.keys.allSatisfy { acknowledged[$0] == $0 })
            stored = acknowledged.count

            // The room is read back from the log: exactly what was acknowledged.
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/full").json)
            #expect(room["version"]?.intValue == stored)
            #expect(room["state"]?.objectValue?.count == stored)
            #expect(room["state"]?["k\(stored + 1)"] == nil)

            // Room again: the client resumes its session where the log has it and sends the rest again.
            try disk.grow(to: 16 << 20)
            let again = try await SessionTests.connect(server, room: "full", session: "s1", extra: "&since=\(stored)")
            let resume = try await again.nextJSON(type: "resume")
            #expect(resume["seq"]?.intValue == stored)
            for seq in (stored + 1)...(stored + 5) {
                let answer = try await SessionTests.answer(to: Self.request(seq: seq), on: again)
                #expect(answer["type"] == "ack")
                #expect(answer["version"]?.intValue == seq)
                #expect(answer["duplicate"] == nil)
            }
        }
        // What was acknowledged after the disk had room is in the log too.
        try await withStoredServer(in: disk.path, app: .json) { server in
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/full").json)
            #expect(room["version"]?.intValue == stored + 5)
            #expect(room["state"]?.objectValue?.count == stored + 5)
        }
    }

    /// A timer scheduled in a write the disk refuses was never stored: the server does not keep it (it would list it
    /// and fire it later, though its sender was told nothing was stored).
    @Test(.enabled(if: SmallFilesystem.isAvailable, "mounting a small filesystem needs root"))
    func aTimerScheduledInAWriteTheDiskRefusesIsNotKept() async throws {
        let disk = try SmallFilesystem(bytes: 1 << 20)
        defer { disk.remove() }
        try await withStoredServer(in: disk.path, app: .json, configure: { $0.maxFrameBytes = 4 << 20 }) { server in
            let client = try await TestClient.connect(server, room: "timer", using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            let first = try await SessionTests.answer(
                to: #"{"type":"action","id":"a","action":{"type":"patch","ops":[{"op":"add","path":"/a","value":1}]}}"#,
                on: client)
            #expect(first["type"] == "ack")
            // 2 MB for a 1 MB disk, and a timer, in one write.
            client.sendRaw(Self.request(seq: 1, bytes: 2 << 20).replacingOccurrences(of: #""seq":1,"#, with: ""))
            client.sendRaw(
                #"{"type":"action","id":"t","action":{"type":"patch","ops":[{"op":"add","path":"/fired","value":1}]},"#
                    + #""after":60000,"timer":"late"}"#)
            let notice = try await client.nextJSON(type: "error")
            #expect(notice["code"] == "unavailable")
            #expect(await client.closeCode() == 1011)
            let timers = try await HTTPGet(port: server.port, path: "/rooms/timer/timers")
            #expect(timers.json?["timers"] == [], "a timer never stored is pending: \(timers.text)")
        }
    }
}

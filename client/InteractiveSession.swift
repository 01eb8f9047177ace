import LockstepClient

@MainActor
final class InteractiveSession {
    let room: RoomClient
    init(room: RoomClient, app: AppKind?, name: String?) { self.room = room }
    func run() async -> Int32 { 0 }
}

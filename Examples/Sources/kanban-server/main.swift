import Kanban
import LockstepCommand

// Every subcommand and option of `lockstep` (serve, token, replay, load), running the kanban board.
await LockstepCommand.main(apps: [Kanban.app])

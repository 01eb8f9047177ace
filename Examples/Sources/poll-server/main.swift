import LockstepCommand
import LockstepCore

await LockstepCommand.main(apps: [App("poll", summary: "a poll", reducer: Poll())])

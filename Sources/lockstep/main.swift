import LockstepApps
import LockstepCommand
import LockstepCore

await LockstepCommand.main(apps: App.builtIn)

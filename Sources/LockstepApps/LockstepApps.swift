// LockstepApps

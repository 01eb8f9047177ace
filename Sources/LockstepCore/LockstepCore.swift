// LockstepCore

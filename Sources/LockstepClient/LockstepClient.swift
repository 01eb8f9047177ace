// LockstepClient

// LockstepTransport

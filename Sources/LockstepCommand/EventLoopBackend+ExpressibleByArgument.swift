public import ArgumentParser
public import LockstepTransport

extension EventLoopBackend: ExpressibleByArgument {}

public import ArgumentParser
public import LockstepServer

extension AccessRole: ExpressibleByArgument {}

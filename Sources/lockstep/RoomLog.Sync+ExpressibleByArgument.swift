public import ArgumentParser
public import LockstepStorage

extension RoomLog.Sync: ExpressibleByArgument {}

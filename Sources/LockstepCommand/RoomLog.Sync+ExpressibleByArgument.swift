public import ArgumentParser
public import LockstepSQLite

extension RoomLog.Sync: ExpressibleByArgument {}

public import ArgumentParser
public import Logging

extension Logger.Level: @retroactive ExpressibleByArgument {}

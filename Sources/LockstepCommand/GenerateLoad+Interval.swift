import ArgumentParser

extension GenerateLoad {
    /// A duration written for people: `30s`, `500ms`, `2m`, or plain seconds (`10`, `0.5`).
    struct Interval: ExpressibleByArgument, Sendable {
        let nanoseconds: UInt64

        /// As ``LoadPlan`` takes it.
        var duration: Duration {
            Duration(
                secondsComponent: Int64(nanoseconds / 1_000_000_000),
                attosecondsComponent: Int64(nanoseconds % 1_000_000_000) * 1_000_000_000)
        }

        init?(argument: String) {
            let units: [(suffix: String, scale: Double)] = [("ms", 1e6), ("s", 1e9), ("m", 60e9)]
            var number = Substring(argument)
            var scale = 1e9
            for unit in units where argument.hasSuffix(unit.suffix) {
                number = argument.dropLast(unit.suffix.count)
                scale = unit.scale
                break
            }
            guard let value = Double(number), value >= 0, value.isFinite else { return nil }
            nanoseconds = UInt64(value * scale)
        }

        var defaultValueDescription: String {
            nanoseconds % 1_000_000_000 == 0 ? "\(nanoseconds / 1_000_000_000)s" : "\(nanoseconds / 1_000_000)ms"
        }
    }
}

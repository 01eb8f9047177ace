import OrderedCollections

extension JSON {
    /// Whether the value nests containers deeper than `depth` or takes more than `budget` bytes written out (about:
    /// strings and keys by their UTF-8 length, other scalars as 8); takes what it counts from `budget`.
    ///
    /// Stops as soon as either limit is passed, so checking a huge or deeply nested value costs only what the limits
    /// allow, and recursion never goes deeper than `depth`.
    public func exceeds(depth: Int, budget: inout Int) -> Bool {
        switch self {
        case .null, .bool, .int, .double:
            budget -= 8
        case .string(let string):
            budget -= string.utf8.count + 2
        case .array(let elements):
            guard depth > 0 else { return true }
            budget -= 2
            for element in elements {
                if budget < 0 || element.exceeds(depth: depth - 1, budget: &budget) { return true }
            }
        case .object(let object):
            guard depth > 0 else { return true }
            budget -= 2
            for (key, value) in object {
                budget -= key.utf8.count + 3
                if budget < 0 || value.exceeds(depth: depth - 1, budget: &budget) { return true }
            }
        }
        return budget < 0
    }
}

import LockstepJSON
import LockstepTestSupport

/// Random documents and mutations of bounded size for property tests.
struct RandomJSON {
    var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }
    mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }

    mutating func string() -> String {
        let alphabet: [String] = ["a", "b", "c", "~", "/", "é", "😀", "\"", "\\", "\n", "\u{1}", " ", "0", "-"]
        return (0..<int(0...6)).map { _ in alphabet[int(0...(alphabet.count - 1))] }.joined()
    }

    mutating func key() -> String {
        let keys = ["a", "b", "c", "d", "id", "name", "a/b", "m~n", "", "0", "é"]
        return keys[int(0...(keys.count - 1))]
    }

    mutating func scalar() -> JSON {
        switch int(0...6) {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2: return .int(int(-1000...1000))
        case 3: return .int(chance(50) ? Int.max - int(0...5) : Int.min + int(0...5))
        case 4: return .double(Double(int(-100_000...100_000)) / Double(int(1...999)))
        case 5: return .double([0.1, 1e-7, 1e300, -2.5e-300, 0.5][int(0...4)])
        default: return .string(string())
        }
    }

    mutating func value(depth: Int = 0) -> JSON {
        guard depth < 4, chance(depth == 0 ? 90 : 40) else { return scalar() }
        if chance(50) {
            return .array((0..<int(0...6)).map { _ in value(depth: depth + 1) })
        }
        var object = JSONObject()
        for _ in 0..<int(0...6) { object[key()] = value(depth: depth + 1) }
        return .object(object)
    }

    /// A copy of `value` with a few random edits at random places.
    mutating func mutate(_ value: JSON, depth: Int = 0) -> JSON {
        switch value {
        case .array(var elements):
            let edits = int(0...2)
            for _ in 0..<edits {
                switch int(0...3) {
                case 0: elements.insert(self.value(depth: depth + 1), at: int(0...elements.count))
                case 1 where !elements.isEmpty: elements.remove(at: int(0...(elements.count - 1)))
                case 2 where !elements.isEmpty:
                    let index = int(0...(elements.count - 1))
                    elements[index] = mutate(elements[index], depth: depth + 1)
                default: elements.append(scalar())
                }
            }
            return .array(elements)
        case .object(var object):
            for _ in 0..<int(0...2) {
                let name = key()
                switch int(0...2) {
                case 0: object[name] = nil
                case 1: object[name] = object[name].map { mutate($0, depth: depth + 1) } ?? scalar()
                default: object[name] = self.value(depth: depth + 1)
                }
            }
            return .object(object)
        default:
            return chance(70) ? scalar() : self.value(depth: depth + 1)
        }
    }
}

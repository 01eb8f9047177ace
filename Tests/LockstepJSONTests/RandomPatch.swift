import LockstepJSON

/// Random RFC 6902 patches against a given document, every kind of operation and spelling included.
extension RandomJSON {
    /// Every location in `value`, the root first.
    func pointers(in value: JSON, at base: JSONPointer = .root) -> [JSONPointer] {
        var found = [base]
        switch value {
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                found += pointers(in: element, at: JSONPointer(tokens: base.tokens + [String(index)]))
            }
        case .object(let object):
            for key in Array(object.keys) {
                found += pointers(in: object[key] ?? .null, at: JSONPointer(tokens: base.tokens + [key]))
            }
        default:
            break
        }
        return found
    }

    /// A location `add` accepts in `document`: a new or existing member, an index up to the end, or `-`.
    mutating func addTarget(in document: JSON) -> JSONPointer {
        let containers = pointers(in: document).filter {
            switch document.value(at: $0) {
            case .array, .object: true
            default: false
            }
        }
        guard !containers.isEmpty else { return .root }
        let parent = containers[int(0...(containers.count - 1))]
        switch document.value(at: parent) {
        case .array(let elements):
            let token = chance(30) ? "-" : String(int(0...elements.count))
            return JSONPointer(tokens: parent.tokens + [token])
        case .object(let object):
            let existing = Array(object.keys)
            let name = !existing.isEmpty && chance(40) ? existing[int(0...(existing.count - 1))] : key()
            return JSONPointer(tokens: parent.tokens + [name])
        default:
            return .root
        }
    }

    /// One operation of any kind on `document`; it may fail to apply.
    mutating func operation(on document: JSON) -> PatchOperation {
        let all = pointers(in: document)
        let existing = all[int(0...(all.count - 1))]
        switch int(0...9) {
        case 0, 1: return .add(path: addTarget(in: document), value: chance(20) ? scalar() : value(depth: 2))
        case 2, 3: return .remove(path: existing)
        case 4, 5:
            let current = document.value(at: existing) ?? .null
            return .replace(path: existing, value: chance(20) ? current : mutate(current, depth: 2))
        case 6: return .move(from: existing, path: chance(10) ? existing : addTarget(in: document))
        case 7: return .copy(from: existing, path: addTarget(in: document))
        default:
            let current = document.value(at: existing) ?? .null
            return .test(path: existing, value: chance(80) ? current : mutate(current, depth: 2))
        }
    }

    /// A patch of up to `count` operations that applies to `document`, built one applicable operation at a time.
    mutating func patch(for document: JSON, count: Int) -> JSONPatch {
        var current = document
        var operations: [PatchOperation] = []
        for _ in 0..<count {
            for _ in 0..<10 {
                let candidate = operation(on: current)
                if let next = try? JSONPatch([candidate]).applied(to: current) {
                    operations.append(candidate)
                    current = next
                    break
                }
            }
        }
        return JSONPatch(operations)
    }
}

extension JSON {
    /// The value at `pointer`, or nil where there is none.
    func value(at pointer: JSONPointer) -> JSON? {
        var current = self
        for token in pointer.tokens {
            switch current {
            case .object(let object):
                guard let member = object[token] else { return nil }
                current = member
            case .array(let elements):
                guard let index = Int(token), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }
}

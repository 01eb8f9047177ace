import Benchmark
import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON

// Lockstep core benchmarks. One section per module; add new sections at the end.
// Foundation runs beside ours on the same bytes so the figures read as ratios on any machine.

let benchmarks: @Sendable () -> Void = {
    jsonBenchmarks()
    storeBenchmarks()
    jsonRoomBenchmarks()
    typedDifferBenchmarks()
    migrationBenchmarks()
}

// MARK: - Fixtures

/// A realistic room state: `count` todo-like objects (~200 bytes each, so 5 000 ≈ 1 MB).
func todoDocument(count: Int) -> JSON {
    var todos: [JSON] = []
    todos.reserveCapacity(count)
    for index in 0..<count {
        todos.append([
            "id": .int(index),
            "title": .string("Todo number \(index): buy milk, eggs and \"fresh\" bread"),
            "done": .bool(index % 3 == 0),
            "priority": .double(Double(index % 7) / 4),
            "tags": ["home", .string("list-\(index % 10)")],
            "assignee": index % 5 == 0 ? .null : ["name": "Ada Lovelace", "email": "ada@example.com"],
            "note": "Unicode too: café, naïve, 日本語 ✓",
        ])
    }
    return ["version": 1, "owner": "room-42", "todos": .array(todos)]
}

/// Large state for the incremental benchmarks: 100 000 small objects.
func largeState() -> JSON {
    .array((0..<100_000).map { .object(["id": .int($0), "done": false]) })
}

struct CounterAction: Codable, Sendable {
    var type = "increment"
    var amount = 1
}

// MARK: - LockstepJSON

func jsonBenchmarks() {
    let document = todoDocument(count: 5_000)
    let bytes = document.serialized()
    let data = Data(bytes)
    let foundationObject = try! JSONSerialization.jsonObject(with: data)
    let megabytes = Double(bytes.count) / 1_000_000
    print("JSON fixture: \(bytes.count) bytes (\(String(format: "%.2f", megabytes)) MB)")

    let throughput = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(3),
        maxIterations: 200
    )

    Benchmark("JSON parse 1MB todos (LockstepJSON)", configuration: throughput) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! JSON(parsing: bytes))
        }
    }
    Benchmark("JSON parse 1MB todos (Foundation JSONSerialization)", configuration: throughput) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! JSONSerialization.jsonObject(with: data))
        }
    }
    Benchmark("JSON serialize 1MB todos (LockstepJSON)", configuration: throughput) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(document.serialized())
        }
    }
    Benchmark("JSON serialize 1MB todos (Foundation JSONSerialization)", configuration: throughput) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! JSONSerialization.data(withJSONObject: foundationObject))
        }
    }

    let state = largeState()
    guard case .array(var changedElements) = state else { fatalError("fixture is an array") }
    changedElements[50_000] = ["id": 50_000, "done": true]
    let changed = JSON.array(changedElements)

    Benchmark("JSON serialize 100k-element state", configuration: throughput) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(state.serialized())
        }
    }
    Benchmark("JSON diff one change in 100k-element array", configuration: throughput) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(JSONPatch(from: state, to: changed))
        }
    }
    Benchmark("JSON diff+serialize patch one change in 100k-element array", configuration: throughput) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(JSONPatch(from: state, to: changed).serialized())
        }
    }

    let micro = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2)
    )
    let counterBefore: JSON = ["count": 41]
    let counterAfter: JSON = ["count": 42]
    Benchmark("JSON counter: diff + encode patch", configuration: micro) { benchmark in
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64)
        for _ in benchmark.scaledIterations {
            buffer.removeAll(keepingCapacity: true)
            JSONPatch(from: counterBefore, to: counterAfter).serialize(into: &buffer)
            blackHole(buffer)
        }
    }
    Benchmark("JSON encode small Codable action", configuration: micro) { benchmark in
        let action = CounterAction()
        for _ in benchmark.scaledIterations {
            blackHole(try! JSON(encoding: action))
        }
    }
    Benchmark("JSON decode small Codable action", configuration: micro) { benchmark in
        let json: JSON = ["type": "increment", "amount": 1]
        for _ in benchmark.scaledIterations {
            blackHole(try! json.decode(CounterAction.self))
        }
    }
    let onePatch = JSONPatch([.replace(path: JSONPointer(tokens: ["50000", "done"]), value: true)])
    Benchmark("JSON apply one op + its inverse to 100k-element state", configuration: micro) { benchmark in
        // Make the document uniquely referenced first: the measured loop must not include the one-off copy.
        var document = state
        try! onePatch.apply(to: &document)
        try! onePatch.apply(to: &document)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let inverse = try! onePatch.apply(to: &document)
            try! inverse.apply(to: &document)
        }
        blackHole(document)
    }
}

// MARK: - LockstepCore: the room store

/// A todos room of `count` items, the last toggle alternating so every action is a change.
func todosStore(count: Int) -> Store<Todos> {
    let items = (1...count).map { Todos.Item(id: $0, title: "Todo number \($0): buy milk and bread") }
    return Store(reducer: Todos(), state: Todos.State(items: items, nextId: count + 1))
}

/// Increments through the store and encodes each patch, as the server does for every action.
func counterBenchmark<R: Reducer>(
    _ name: String, _ reducer: R, configuration: Benchmark.Configuration
) where R.Action == Counter.Action {
    Benchmark(name, configuration: configuration) { benchmark in
        var store = Store(reducer: reducer)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let change = try! store.send(.increment).change!
            buffer.removeAll(keepingCapacity: true)
            change.patch.serialize(into: &buffer)
            blackHole(buffer)
        }
    }
}

func storeBenchmarks() {
    let micro = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2)
    )
    let throughput = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(3),
        maxIterations: 200
    )

    counterBenchmark("Store counter action: reduce, diff, encode patch", Counter(), configuration: micro)

    for count in [10, 1_000, 100_000] {
        Benchmark("Store todos one-item change, \(count) items", configuration: throughput) { benchmark in
            var store = todosStore(count: count)
            let id = count / 2 + 1
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let change = try! store.send(.toggle(id: id)).change!
                blackHole(change.patch.serialized())
            }
        }
        Benchmark("Store todos encode whole state, \(count) items", configuration: throughput) { benchmark in
            let store = todosStore(count: count)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try! store.stateJSON().serialized())
            }
        }
    }
}

// MARK: - LockstepCore + LockstepApps: a `json` room

/// A store kept across samples, so each sample measures one step on a store whose state is uniquely referenced.
final class StoreBox<R: Reducer>: @unchecked Sendable {
    var store: Store<R>
    init(_ store: Store<R>) { self.store = store }
}

/// A `json` room holding an array of `count` small objects (`{"id":N,"done":false}`).
func jsonRoom(count: Int) -> StoreBox<JSONDocument> {
    let state = JSON.array((0..<count).map { .object(["id": .int($0), "done": false]) })
    return StoreBox(Store(reducer: JSONDocument(), state: state))
}

/// Replaces the middle element, alternating its `done`, so every action is a change.
func replaceMiddle(of count: Int, done: Bool) -> JSONDocument.Action {
    let index = count / 2
    let element: JSON = ["id": .int(index), "done": .bool(done)]
    return JSONDocument.Action(ops: JSONPatch([.replace(path: JSONPointer(tokens: [String(index)]), value: element)]))
}

func jsonRoomBenchmarks() {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(2),
        maxIterations: 300
    )
    for count in [100, 100_000] {
        let change = jsonRoom(count: count)
        Benchmark("Store json one-op change, \(count) items", configuration: configuration) { benchmark in
            let action = replaceMiddle(of: count, done: change.store.version % 2 == 0)
            benchmark.startMeasurement()
            let applied = try! change.store.send(action).change!
            blackHole(applied.patch.serialized())
        }
        let undo = jsonRoom(count: count)
        _ = try! undo.store.send(replaceMiddle(of: count, done: true))
        _ = try! undo.store.undo()
        Benchmark("Store json undo, \(count) items", configuration: configuration) { benchmark in
            _ = try! undo.store.redo()
            benchmark.startMeasurement()
            blackHole(try! undo.store.undo().patch.serialized())
        }
        // Undo mine: the author's own change taken back by its guarded inverse, beside global undo above.
        let author = ReducerContext(sender: Sender(client: "c1", session: "alice"))
        let mine = jsonRoom(count: count)
        _ = try! mine.store.send(replaceMiddle(of: count, done: true), context: author)
        _ = try! mine.store.undoMine(context: author)
        Benchmark("Store json undo mine, \(count) items", configuration: configuration) { benchmark in
            _ = try! mine.store.redoMine(context: author)
            benchmark.startMeasurement()
            blackHole(try! mine.store.undoMine(context: author).patch.serialized())
        }
        let redo = jsonRoom(count: count)
        _ = try! redo.store.send(replaceMiddle(of: count, done: true))
        Benchmark("Store json redo, \(count) items", configuration: configuration) { benchmark in
            _ = try! redo.store.undo()
            benchmark.startMeasurement()
            blackHole(try! redo.store.redo().patch.serialized())
        }
    }
}

// MARK: - LockstepCore: the typed differ beside a reducer's own patches

/// Runs `R`'s `reduce` but leaves finding the change to the store's typed differ, as every plain `Reducer` does:
/// the path the counter and todos apps took before they returned their own patches.
struct TypedDiffer<R: Reducer>: Reducer {
    var inner: R
    var initialState: R.State { inner.initialState }
    func reduce(into state: inout R.State, action: R.Action) throws(Rejection) -> Effect<R.Action> {
        try inner.reduce(into: &state, action: action)
    }
}

func typedDifferBenchmarks() {
    let micro = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2)
    )
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(2),
        maxIterations: 300
    )
    counterBenchmark(
        "Store counter action, typed differ: reduce, diff, encode patch", TypedDiffer(inner: Counter()),
        configuration: micro)
    for count in [10, 100_000] {
        let id = count / 2 + 1
        // Kept across samples, so a sample is one action and not the teardown of a large store.
        let patching = StoreBox(todosStore(count: count))
        Benchmark("Store todos one-item change, store kept, \(count) items", configuration: configuration) { _ in
            blackHole(try! patching.store.send(.toggle(id: id)).change!.patch.serialized())
        }
        let start = todosStore(count: count)
        let diffed = StoreBox(Store(reducer: TypedDiffer(inner: Todos()), state: start.state))
        let name = "Store todos one-item change, store kept, typed differ, \(count) items"
        Benchmark(name, configuration: configuration) { _ in
            blackHole(try! diffed.store.send(.toggle(id: id)).change!.patch.serialized())
        }
        let undo = StoreBox(todosStore(count: count))
        _ = try! undo.store.send(.toggle(id: id))
        _ = try! undo.store.undo()
        Benchmark("Store todos undo (typed state), \(count) items", configuration: configuration) { benchmark in
            _ = try! undo.store.redo()
            benchmark.startMeasurement()
            blackHole(try! undo.store.undo().patch.serialized())
        }
    }
}

// MARK: - State versions

/// Loading a stored room's state: as stored under the app's state version (the baseline), and stored under version 1
/// of an app at version 2, whose migration renames a member of every item (what a load costs once per room).
func migrationBenchmarks() {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2), maxIterations: 300)
    let renaming = App(
        "todos", summary: "todos at state version 2", reducer: Todos(), stateVersion: 2,
        migrations: [
            Migration(from: 1) { state in
                try state.modifyEach("/items") { item in
                    try item.renameMember("title", to: "name")
                    try item.renameMember("name", to: "title")
                }
            }
        ])
    for count in [100, 10_000] {
        let state = try! todosStore(count: count).stateJSON()
        Benchmark("Load todos state, current state version, \(count) items", configuration: configuration) { _ in
            blackHole(
                try! App.todos.loadStore(state: state, stateVersion: 1, version: count, history: History(depth: 1000)))
        }
        Benchmark("Load todos state, migrated from state version 1, \(count) items", configuration: configuration) { _ in
            blackHole(
                try! renaming.loadStore(state: state, stateVersion: 1, version: count, history: History(depth: 1000)))
        }
    }
}

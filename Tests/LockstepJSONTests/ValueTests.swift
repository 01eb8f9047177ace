import LockstepJSON
import Testing

@Suite struct ValueTests {
    @Test func objectEqualityIgnoresMemberOrder() {
        let a: JSON = ["x": 1, "y": [1, 2], "z": ["k": "v"]]
        let b: JSON = ["z": ["k": "v"], "y": [1, 2], "x": 1]
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != ["x": 1, "y": [2, 1], "z": ["k": "v"]])
        #expect(a != ["x": 1, "y": [1, 2]])
    }

    @Test func numbersCompareByValue() {
        #expect(JSON.int(1) == JSON.double(1.0))
        #expect(JSON.double(1.0) == JSON.int(1))
        #expect(JSON.int(1).hashValue == JSON.double(1.0).hashValue)
        #expect(JSON.int(1) != JSON.double(1.5))
        #expect(JSON.int(Int.max) != JSON.double(9_223_372_036_854_775_808.0))
        #expect(JSON.int(0) == JSON.double(-0.0))
        #expect(JSON.int(0).hashValue == JSON.double(-0.0).hashValue)
        #expect(JSON.int(Int.min) == JSON.double(-9_223_372_036_854_775_808.0))
        #expect(JSON.double(.nan).intValue == nil)
        #expect(JSON.double(1e300).intValue == nil)
    }

    @Test func kindsNeverCompareEqual() {
        #expect(JSON.null != JSON.bool(false))
        #expect(JSON.int(1) != JSON.bool(true))
        #expect(JSON.string("1") != JSON.int(1))
        #expect(JSON.array([]) != JSON.object([:]))
    }

    @Test func stringsCompareByCodePointsNotCanonicalEquivalence() {
        let composed = JSON.string("\u{E9}")
        let decomposed = JSON.string("e\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
    }

    @Test func hashableWorksInSets() {
        let values: Set<JSON> = [1, 1.0, "1", [1], ["a": 1], ["a": 1.0], nil]
        #expect(values.count == 5)
    }

    @Test func accessorsReadTheMatchingKindOnly() {
        let value: JSON = ["name": "x", "n": 3, "d": 2.5, "ok": true, "list": [10, 20], "obj": ["k": nil]]
        #expect(value["name"]?.stringValue == "x")
        #expect(value["n"]?.intValue == 3)
        #expect(value["n"]?.doubleValue == 3.0)
        #expect(value["d"]?.intValue == nil)
        #expect(value["d"]?.doubleValue == 2.5)
        #expect(JSON.double(4.0).intValue == 4)
        #expect(value["ok"]?.boolValue == true)
        #expect(value["list"]?[1] == 20)
        #expect(value["list"]?[2] == nil)
        #expect(value["list"]?[-1] == nil)
        #expect(value["list"]?.arrayValue?.count == 2)
        #expect(value["obj"]?.objectValue?["k"] == .null)
        #expect(value["obj"]?["k"]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(value[0] == nil)
        #expect(JSON.int(1)["a"] == nil)
        #expect(value["name"]?.intValue == nil)
    }

    @Test func objectSubscriptSetsAndRemoves() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["a"] = 5
        object["c"] = 3
        object["b"] = nil
        #expect(Array(object.keys) == ["a", "c"])
        #expect(object.removeValue(forKey: "a") == 5)
        #expect(object.count == 1)
        #expect(!object.isEmpty)
    }
}

import Foundation
import LockstepServer
import LockstepTestSupport
import Testing

/// The JavaScript client and its TypeScript declarations, as a browser or Deno fetches them from a server.
struct WebAssetTests {
    @Test func theClientPointsAtDeclarationsThatCoverEveryExport() async throws {
        try await withServer { server in
            let module = try await HTTPGet(port: server.port, path: "/lockstep.js")
            let declarations = try await HTTPGet(port: server.port, path: "/lockstep.d.ts")
            #expect(module.status == 200)
            #expect(module.head.contains("x-typescript-types: /lockstep.d.ts"))
            #expect(declarations.status == 200)
            #expect(declarations.head.contains("content-type: application/typescript"))

            let exports = Self.names(in: module.text, matching: #"export (?:async )?(function|class) (\w+)"#)
            #expect(exports.count >= 5, "the module's exports were found")
            let declared = Self.names(in: declarations.text, matching: #"export (?:declare )?(function|class) (\w+)"#)
            #expect(exports.isSubset(of: declared), "undeclared: \(exports.subtracting(declared).sorted())")

            // Room's API and the constructor's options are declared as the module has them.
            let methods = Self.names(in: module.text, matching: #"\n  (\w+)\([^)]*\) \{"#)
            let api: Set = [
                "method subscribe", "method send", "method undo", "method redo", "method revert", "method close",
            ]
            #expect(api.isSubset(of: methods), "the module lacks \(api.subtracting(methods))")
            let declaredMethods = Self.names(in: declarations.text, matching: #"\n  (\w+)(?:<[^>]*>)?\("#)
            #expect(api.isSubset(of: declaredMethods), "undeclared: \(api.subtracting(declaredMethods))")
            let options = try #require(module.text.firstMatch(of: #/\{\s*(name,[^}]*)\}\s*=\s*\{\}/#)?.output.1)
            let optionNames = options.split(separator: ",").map {
                $0.split(separator: "=")[0].trimmingCharacters(in: .whitespacesAndNewlines)
            }.filter { !$0.isEmpty }
            #expect(optionNames.count >= 7)
            for option in optionNames {
                #expect(declarations.text.contains("  \(option)?:"), "RoomOptions lacks \(option)")
            }
        }
    }

    /// "KIND NAME" for each match of `pattern` (two groups), or "method NAME" (one group).
    private static func names(in text: String, matching pattern: String) -> Set<String> {
        let expression = try! NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return Set(expression.matches(in: text, range: range).map { match in
            let groups = (1..<match.numberOfRanges).map { String(text[Range(match.range(at: $0), in: text)!]) }
            return groups.count == 2 ? groups.joined(separator: " ") : "method " + groups[0]
        })
    }
}

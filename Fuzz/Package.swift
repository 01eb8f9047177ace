// swift-tools-version:6.2
import PackageDescription

// A libFuzzer target over the wire decoder and the JSON Patch engine. Kept out of the root package so
// the normal build never links it. Build (see docs/security.md):
//   swift build -c release --package-path Fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library
let package = Package(
    name: "LockstepFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Lockstep", path: "..")],
    targets: [
        .target(name: "CFuzzerDriver"),
        .executableTarget(
            name: "LockstepFuzz",
            dependencies: [
                .product(name: "LockstepJSON", package: "Lockstep"),
                .product(name: "LockstepCore", package: "Lockstep"),
                "CFuzzerDriver",
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ]
        ),
    ]
)

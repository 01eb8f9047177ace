// swift-tools-version:6.2
import PackageDescription

// A separate package so `make test` never builds the benchmark toolchain.
// Run from this directory: `swift package benchmark`.
let package = Package(
    name: "LockstepBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Lockstep", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "LockstepJSON", package: "Lockstep"),
                .product(name: "LockstepCore", package: "Lockstep"),
                .product(name: "LockstepApps", package: "Lockstep"),
            ],
            path: "Benchmarks/CoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)

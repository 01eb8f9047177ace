// swift-tools-version:6.2
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The server's own modules: a nonisolated async function runs on its caller's executor, so the server's loop awaits
/// storage and resumes without a hop through the shared task pool.
let sourceSettings = strictSettings + [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]

let package = Package(
    name: "Lockstep",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LockstepJSON", targets: ["LockstepJSON"]),
        .library(name: "LockstepCore", targets: ["LockstepCore"]),
        .library(name: "LockstepApps", targets: ["LockstepApps"]),
        .library(name: "LockstepTesting", targets: ["LockstepTesting"]),
        .library(name: "LockstepServer", targets: ["LockstepServer"]),
        .library(name: "LockstepClient", targets: ["LockstepClient"]),
        .library(name: "LockstepSQLite", targets: ["LockstepSQLite"]),
        .library(name: "LockstepPostgres", targets: ["LockstepPostgres"]),
        .library(name: "LockstepLoad", targets: ["LockstepLoad"]),
        .library(name: "LockstepCommand", targets: ["LockstepCommand"]),
        .executable(name: "lockstep", targets: ["lockstep"]),
        .executable(name: "lockstep-client", targets: ["lockstep-client"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/pointfreeco/swift-custom-dump.git", from: "1.7.3"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/pointfreeco/swift-clocks.git", from: "1.1.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        // `make docs`: API documentation of every library product.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Pure layers: no I/O, no threads.
        .target(
            name: "LockstepJSON",
            dependencies: [.product(name: "Collections", package: "swift-collections")],
            swiftSettings: sourceSettings
        ),
        .target(
            name: "LockstepCore",
            dependencies: ["LockstepJSON", .product(name: "DequeModule", package: "swift-collections")],
            swiftSettings: strictSettings
        ),
        .target(name: "LockstepApps", dependencies: ["LockstepCore"], swiftSettings: strictSettings),
        .target(
            name: "LockstepTesting",
            dependencies: [
                "LockstepCore",
                .product(name: "CustomDump", package: "swift-custom-dump"),
            ],
            swiftSettings: strictSettings
        ),

        // The C boundary.
        .systemLibrary(
            name: "CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev", "libev-dev"])]
        ),
        // zlib's raw deflate, for permessage-deflate.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "LockstepTransport",
            dependencies: [
                "CLibWebSockets", "CZlib",
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strictSettings
        ),

        // Durable rooms: the storage seam, and the embedded SQLite log behind it.
        .target(name: "LockstepStorage", dependencies: ["LockstepCore"], swiftSettings: sourceSettings),
        .target(
            name: "LockstepSQLite",
            dependencies: ["LockstepStorage", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: sourceSettings
        ),

        // Rooms shared by several servers.
        .target(
            name: "LockstepPostgres",
            dependencies: [
                "LockstepStorage", "LockstepCore", "LockstepJSON",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // The network layers.
        .target(
            name: "LockstepServer",
            dependencies: [
                "LockstepCore", "LockstepApps", "LockstepTransport", "LockstepStorage",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Web")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "LockstepClient",
            dependencies: ["LockstepCore", "LockstepTransport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),

        // The load generator: thousands of WebSocket clients in one room, latency of every delivery.
        .target(
            name: "LockstepLoad",
            dependencies: ["LockstepTransport", .product(name: "Histogram", package: "hdrhistogram-swift")],
            swiftSettings: strictSettings
        ),

        // The command line, as a library: a custom app's executable gets every subcommand.
        .target(
            name: "LockstepCommand",
            dependencies: [
                "LockstepServer", "LockstepClient", "LockstepStorage", "LockstepSQLite", "LockstepPostgres",
                "LockstepLoad",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CustomDump", package: "swift-custom-dump"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: strictSettings
        ),

        // Executables.
        .executableTarget(
            name: "lockstep",
            dependencies: ["LockstepCommand", "LockstepApps", "LockstepCore"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "lockstep-client",
            dependencies: [
                "LockstepClient", "LockstepApps", "LockstepTransport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "client",
            swiftSettings: strictSettings
        ),

        // Tests mirror the modules.
        // Helpers shared by the test targets: seeded randomness, child processes.
        .target(
            name: "LockstepTestSupport",
            dependencies: ["LockstepJSON", .product(name: "Clocks", package: "swift-clocks")],
            path: "Tests/LockstepTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LockstepJSONTests",
            dependencies: ["LockstepJSON", "LockstepTestSupport"],
            resources: [.copy("Resources")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LockstepCoreTests",
            dependencies: ["LockstepCore", "LockstepTesting", "LockstepTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LockstepAppsTests",
            dependencies: ["LockstepApps", "LockstepTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LockstepStorageTests",
            dependencies: [
                "LockstepStorage", "LockstepSQLite", "LockstepApps", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LockstepPostgresTests",
            dependencies: [
                "LockstepPostgres", "LockstepStorage", "LockstepSQLite", "LockstepCore", "LockstepTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LockstepTransportTests",
            dependencies: ["LockstepTransport", "LockstepTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LockstepServerTests",
            dependencies: [
                "LockstepServer", "LockstepClient", "LockstepApps", "LockstepStorage", "LockstepSQLite",
                "LockstepTestSupport", "LockstepPostgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Clocks", package: "swift-clocks"),
                "LockstepTesting",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LockstepCommandTests",
            dependencies: [
                "LockstepCommand", "LockstepLoad", "LockstepTransport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LockstepLoadTests",
            dependencies: ["LockstepLoad"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LockstepClientTests",
            dependencies: [
                "LockstepClient", "LockstepServer", "LockstepSQLite", "LockstepApps", "LockstepTestSupport",
                .product(name: "Clocks", package: "swift-clocks"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)

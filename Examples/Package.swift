// swift-tools-version:6.2
import PackageDescription

// A server of your own, as a package depending on Lockstep: a shared kanban board (Sources/Kanban), its executable
// with every option of `lockstep` (Sources/kanban-server), and its tests. See README.md. The poll server and
// ReadmeTests hold the main README's snippets, so that they keep compiling.
let package = Package(
    name: "KanbanExample",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Lockstep", path: "..")
    ],
    targets: [
        .target(
            name: "Kanban",
            dependencies: [.product(name: "LockstepCore", package: "Lockstep")]
        ),
        .executableTarget(
            name: "kanban-server",
            dependencies: ["Kanban", .product(name: "LockstepCommand", package: "Lockstep")]
        ),
        // The main README's "Build your own server", as written there.
        .executableTarget(
            name: "poll-server",
            dependencies: [
                .product(name: "LockstepCommand", package: "Lockstep"),
                .product(name: "LockstepCore", package: "Lockstep"),
            ]
        ),
        .testTarget(
            name: "KanbanTests",
            dependencies: [
                "Kanban",
                .product(name: "LockstepCore", package: "Lockstep"),
                .product(name: "LockstepJSON", package: "Lockstep"),
                .product(name: "LockstepTesting", package: "Lockstep"),
            ]
        ),
        // The snippets of the main README, compiled and run, so the README cannot drift from the API.
        .testTarget(
            name: "ReadmeTests",
            dependencies: [
                "Kanban", "poll-server",
                .product(name: "LockstepCore", package: "Lockstep"),
                .product(name: "LockstepServer", package: "Lockstep"),
                .product(name: "LockstepSQLite", package: "Lockstep"),
                .product(name: "LockstepTesting", package: "Lockstep"),
                .product(name: "LockstepApps", package: "Lockstep"),
                .product(name: "LockstepClient", package: "Lockstep"),
            ]
        ),
    ]
)

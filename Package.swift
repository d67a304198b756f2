// swift-tools-version: 6.0
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "zflux",
    // zflux is built and tested on Linux only, and its nodes and command line need Linux (CLinux.h stops
    // any other build with an #error that says so). The macOS minimum is what the model's
    // Synchronization needs, for a package that resolves zflux on a Mac.
    platforms: [.macOS(.v15)],
    products: [
        // What a team's own package names (GUIDE §6): ZFluxCLI for its @main, FluxCore for its apps,
        // FluxWire for @WireCodable, ViewNode for its screens, FluxTesting for its reducers' tests (FluxCore
        // alone: no node, socket or etcd code) and FluxClusterTesting for tests of a whole cluster in one
        // process; Devtools for a recorded session's test. Every module a public signature mentions is a product.
        //
        // Platforms, product by product. "Linux only": it reaches eventfd, timerfd, /proc, CPU affinity or
        // Glibc by name, itself or through NodeSupport (README, Platforms, says what a port would need).
        // "Platform-free": it imports nothing Linux-specific, which LayeringTests checks for FluxFormat,
        // FluxProtocol, FluxCore, FluxWire and FluxTesting; "no Linux import" marks the few whose imports nothing checks.
        .library(name: "ZFluxCLI", targets: ["ZFluxCLI"]),  // Linux only: the command line and the nodes it runs
        .library(name: "FluxCore", targets: ["FluxCore"]),  // platform-free
        // The binary format and its JSON form, with @WireCodable's runtime, and the wire protocol on it: what
        // a client in another process needs, without the programming model. FluxCore re-exports both.
        .library(name: "FluxFormat", targets: ["FluxFormat"]),  // platform-free
        .library(name: "FluxProtocol", targets: ["FluxProtocol"]),  // platform-free
        // `@WireCodable`: FluxCore plus the macro, so that only packages that use it build swift-syntax.
        .library(name: "FluxWire", targets: ["FluxWire"]),  // platform-free
        .library(name: "NodeCores", targets: ["NodeCores"]),  // no Linux import (FluxCore and Logging)
        .library(name: "ViewNode", targets: ["ViewNode"]),  // Linux only: a node, and the terminal
        .library(name: "FluxTesting", targets: ["FluxTesting"]),  // platform-free
        .library(name: "FluxClusterTesting", targets: ["FluxClusterTesting"]),  // Linux only: runs the nodes in the test process
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),  // Linux only: eventfd and timerfd beside libzmq
        .library(name: "NodeSupport", targets: ["NodeSupport"]),  // Linux only: CPU affinity, /proc
        .library(name: "Dispatcher", targets: ["Dispatcher"]),  // Linux only: a node
        .library(name: "StoreNode", targets: ["StoreNode"]),  // Linux only: a node
        .library(name: "Devtools", targets: ["Devtools"]),  // Linux only: built on the nodes
        .library(name: "Cluster", targets: ["Cluster"]),  // Linux only: the supervisor, /proc
        .library(name: "Spawn", targets: ["Spawn"]),  // Linux only: posix_spawn, waitpid, setpriv
        .library(name: "Bench", targets: ["Bench"]),  // Linux only: timerfd, /proc
        .library(name: "Simulation", targets: ["Simulation"]),  // no Linux import (the cores and the journal in one process)
        // Leader election over etcd (docs/OPERATIONS.md, High availability): what a standby dispatcher builds on.
        .library(name: "Leadership", targets: ["Leadership"]),  // Linux only: its etcd's process calls Glibc
        // The example apps and their screens: one client of the framework among others.
        .library(name: "Examples", targets: ["Examples"]),  // no Linux import
        .library(name: "ExampleViews", targets: ["ExampleViews"]),  // Linux only: ViewNode
        .executable(name: "zflux", targets: ["zflux"]),  // Linux only
        .executable(name: "zflux-floor", targets: ["zflux-floor"]),  // Linux only: C on libzmq, with prctl
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        // The macro builds against swift-syntax 600.0.1, 602.0.0 and 603.0.1 (tried): a range as wide as
        // that lets a package that also uses another macro library (TCA takes 509..<605) resolve.
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"604.0.0"),
    ],
    targets: [
        // libzmq's header and library from where Debian's libzmq3-dev puts them (`make` installs it). No
        // pkg-config: Debian's libzmq.pc adds `-isystem` flags (Kerberos, for GSSAPI) that SwiftPM refuses
        // with a warning on every build, and zmq.h needs none of them. The providers are what SwiftPM
        // suggests installing when zmq.h is missing; Homebrew's is there for a port to macOS (README,
        // Platforms), since the targets that use libzmq build on Linux only today.
        .systemLibrary(name: "CZMQ", providers: [.apt(["libzmq3-dev"]), .brew(["zeromq"])]),
        // libsodium, which libzmq's CURVE is built on (libzmq3-dev depends on libsodium-dev), for the one
        // CURVE computation libzmq does not offer: the key agreement behind `Curve.agreedDigest`.
        .systemLibrary(name: "CSodium", providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]),
        // The Linux calls Glibc's module leaves out (eventfd, timerfd) and a wrapper for variadic prctl.
        .target(name: "CLinux"),
        .target(name: "ZeroMQ", dependencies: ["CZMQ", "CSodium", "CLinux"]),
        // The bench's physical floor: C programs on libzmq, so nothing of ours flatters the comparison.
        .executableTarget(
            name: "zflux-floor", path: "Sources/zflux-floor",
            cSettings: [.unsafeFlags(["-O2"])], linkerSettings: [.linkedLibrary("zmq"), .linkedLibrary("m")]),
        .target(name: "FluxFormat", dependencies: []),
        .target(name: "FluxProtocol", dependencies: ["FluxFormat"]),
        .target(name: "FluxCore", dependencies: ["FluxFormat", "FluxProtocol"]),
        // ChildProcess: the one way a child process is started and stopped (the supervisor's nodes, the
        // bench's children, the etcd of a pair), on Glibc alone, so that Leadership needs no ZeroMQ for it.
        .target(name: "Spawn"),
        // A TOML 1.0 parser in Swift, for cluster configs and workload files: any text is a table or an
        // error with its line (libFuzzer's config and workload targets run it).
        .target(name: "TOML"),
        // The code generator of `@WireCodable` (docs/GUIDE.md): the runtime it calls lives in FluxCore.
        .macro(
            name: "FluxMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]),
        .target(name: "FluxWire", dependencies: ["FluxCore", "FluxMacros"]),
        // The nodes' rules as deterministic state machines. The model and swift-log's API only, so the
        // compiler keeps sockets, files and the rest of the shells out; and members of modules FluxCore
        // itself imports (Foundation) stay out of reach unless imported, which none of these files does.
        .target(
            name: "NodeCores",
            dependencies: ["FluxCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]),
        .target(
            name: "NodeSupport",
            dependencies: [
                "ZeroMQ", "CLinux", "FluxCore", .product(name: "Logging", package: "swift-log"),
            ]),
        // The journal, on a storage it is given: files for a node, the simulator's disk for the simulator.
        .target(name: "Journaling", dependencies: ["FluxCore", "NodeCores"]),
        .target(name: "Dispatcher", dependencies: ["NodeSupport", "NodeCores", "Journaling"]),
        .target(name: "StoreNode", dependencies: ["NodeSupport", "NodeCores"]),
        .target(name: "ViewNode", dependencies: ["NodeSupport", "NodeCores"]),
        // Their `@WireCodable` conformances are written out (Counter+WireCodable.swift beside Counter.swift, and so on,
        // which WireCodableExpansionTests checks against the macro), so the stock binary builds no swift-syntax.
        .target(name: "Examples", dependencies: ["FluxCore"]),
        .target(
            name: "Devtools", dependencies: ["NodeSupport", "Dispatcher", "StoreNode", "ViewNode", "TOML"]),
        // The one way zflux's small HTTP servers (metrics, devtools) bind their port and write an answer, on swift-nio.
        .target(
            name: "HTTPReply",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        // `zflux devtools`: the page and its WebSocket on swift-nio; the cluster's side is the command's.
        .target(
            name: "DevtoolsServer",
            dependencies: [
                "CLinux", "HTTPReply",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(name: "FluxTesting", dependencies: ["FluxCore"]),
        .target(
            name: "FluxClusterTesting",
            dependencies: [
                // FluxTesting for its TestClock, which a test cluster's dispatcher may run by.
                "FluxCore", "FluxTesting", "NodeCores", "NodeSupport", "Dispatcher", "StoreNode", "ViewNode", "Devtools",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(name: "ExampleViews", dependencies: ["Examples", "ViewNode"]),
        .target(
            name: "Bench",
            dependencies: [
                "NodeSupport", "NodeCores", "ViewNode", "Dispatcher", "StoreNode", "Cluster", "Spawn",
                "TOML", .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]),
        .target(
            name: "Simulation",
            dependencies: [
                "FluxCore", "NodeCores", "Journaling", .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "Cluster",
            dependencies: [
                "NodeSupport", "Spawn", "TOML", "HTTPReply",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        // An etcd v3 client over its JSON gateway, the election agent on it, and a real etcd for tests.
        .target(
            name: "Leadership",
            dependencies: [
                "Spawn",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "ZFluxCLI",
            dependencies: [
                "NodeSupport", "Dispatcher", "StoreNode", "ViewNode", "Bench", "Cluster", "Simulation", "Devtools", "Leadership",
                "DevtoolsServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The commit the stock binary was built from, for `--version`: generated into the executable
        // alone, so that a team's package, which builds ZFluxCLI but not this target, compiles nothing of
        // zflux again when the checkout's commit changes.
        .plugin(name: "BuildInfo", capability: .buildTool()),
        // The stock binary: the CLI with the example apps and screens.
        .executableTarget(name: "zflux", dependencies: ["ZFluxCLI", "Examples", "ExampleViews"], plugins: ["BuildInfo"]),
        // Allocations per action through the dispatcher's and a store's cores (AllocationTests): a
        // counter that stands in for glibc's allocator, linked into this one executable only.
        .target(name: "CAllocationCounter"),
        .executableTarget(
            name: "zflux-allocations",
            dependencies: ["CAllocationCounter", "FluxCore", "NodeCores", "Examples", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(name: "FluxCoreTests", dependencies: ["FluxCore", "FluxFormat", "FluxProtocol", "FluxWire", "Examples", "FluxTesting"]),
        .testTarget(name: "FluxTestingTests", dependencies: ["FluxTesting"]),
        // The macro's code run on the example apps' marked types: their written-out conformances are its.
        .testTarget(
            name: "FluxMacrosTests",
            dependencies: [
                "FluxMacros",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ]),
        .testTarget(
            name: "NodeCoresTests", dependencies: ["NodeCores", "FluxCore", "Examples", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "ViewTests", dependencies: ["ViewNode", "FluxCore"]),
        .testTarget(name: "BenchTests", dependencies: ["Bench", "Cluster", "NodeSupport", "Examples"]),
        .testTarget(name: "CLITests", dependencies: ["ZFluxCLI", "FluxCore", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .testTarget(name: "SimulationTests", dependencies: ["Simulation", "Dispatcher", "Examples"]),
        // The fuzz targets (shared with scripts/fuzz.sh's libFuzzer build) over their committed corpus.
        .testTarget(
            name: "FuzzCorpusTests",
            dependencies: [
                "Bench", "Cluster", "Devtools", "Dispatcher", "Journaling", "Examples", "FluxCore", "NodeCores",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "ExamplesTests",
            dependencies: ["FluxTesting", "FluxClusterTesting", "Examples", "FluxWire", "ExampleViews", "ViewNode", "Devtools"],
            // Recorded sessions the tests read from their source directory (docs/GUIDE.md §7).
            exclude: ["Sessions"]),
        // docs/API.md: its examples, which scripts/extract-api.py writes into APITally.swift, compiled and
        // run; its declarations found in Sources/ (APIDeclarationTests).
        .testTarget(
            name: "APIDocsTests", dependencies: ["Cluster", "FluxClusterTesting", "FluxCore", "FluxTesting", "ViewNode", "ZFluxCLI"]),
        .testTarget(
            name: "NodeTests",
            dependencies: [
                "Dispatcher", "StoreNode", "ViewNode", "NodeCores", "Examples", "FluxTesting", "FluxClusterTesting",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // One test target per library target; NodeTests runs the three node shells together.
        .testTarget(
            name: "DispatcherTests",
            dependencies: ["Dispatcher", "Journaling", "FluxCore", "NodeCores", "Examples", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "ClusterTests", dependencies: ["Cluster", "FluxCore", "NodeSupport", "TOML", "FluxTesting"]),
        .testTarget(name: "SpawnTests", dependencies: ["Spawn"]),
        .testTarget(
            name: "LeadershipTests",
            dependencies: ["Leadership", .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio")]),
        .testTarget(
            name: "DevtoolsTests",
            dependencies: [
                "Devtools", "DevtoolsServer", "Dispatcher", "StoreNode", "ViewNode", "NodeSupport", "Examples", "ExampleViews", "FluxCore",
                "Cluster",
            ]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "ZeroMQ", "FluxCore", "NodeSupport", "Examples", "FluxTesting", "FluxClusterTesting", "Devtools", "Cluster", "Dispatcher",
                "Leadership", "NodeCores", "Spawn",
                .product(name: "Logging", package: "swift-log"),
            ],
            // What each release wrote (GoldenFixtureTests), read from the source directory.
            exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)

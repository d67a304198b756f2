import Foundation

/// The package `zflux new NAME` writes: a team's own app, its terminal screen, a TestStore test, a
/// cluster config and a README, built on zflux's products the way any team's package is.
///
/// The templates are `Starter+*.swift`, one per part, as raw string literals: `\(…)` in them is the
/// generated code's own interpolation, and `\#(…)` puts the package's names in.
struct Starter {
    /// The package's name and its app's namespace: `Poll`.
    let name: String
    /// The zflux checkout the package depends on (an absolute path); nil: the placeholder URL its README
    /// tells how to replace.
    let zfluxPath: String?

    /// Checks `name` before anything is written: a Swift type name that the generated code can use
    /// beside the names it imports.
    init(name: String, zfluxPath: String?) throws {
        guard let first = name.unicodeScalars.first, ("A"..."Z").contains(first),
            name.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) })
        else {
            throw CLIError(
                "'\(name)' is not a package name zflux can use: it must start with an uppercase letter and have only letters and digits (e.g. Poll, TeamTally2)"
            )
        }
        self.name = name
        self.zfluxPath = zfluxPath
        // A type of ours named like one the code uses would shadow it; a module named like another in
        // the build (compared without case: macOS file systems ignore it) would clash with it.
        if let used = Self.typesTheCodeUses.first(where: { [name, appModule, screenType].contains($0) }) {
            throw CLIError("'\(name)' would hide '\(used)', which the generated code uses; pick another name")
        }
        if let used = Self.modulesInTheBuild.first(where: { [appName, appModule.lowercased(), testModule.lowercased()].contains($0.lowercased()) }) {
            throw CLIError("'\(name)' would name a module like '\(used)', which the package builds with; pick another name")
        }
    }

    /// Types the templates name.
    static let typesTheCodeUses = [
        "Data", "String", "Int", "Bool", "Error", "Character", "Task", "Duration", "JSONDecoder", "JSONEncoder", "Reducer", "Effect",
        "FluxApp", "AppScreen", "Frame", "StyledLine", "Key", "KeyOutcome", "TestStore", "TestClock", "TestCluster", "Test", "Suite", "State",
        "Action", "Environment",
        "Option", "Unreachable",
    ]

    /// Modules the package is built with: zflux's, its dependencies' and the toolchain's.
    static let modulesInTheBuild = [
        "zflux", "ZFluxCLI", "FluxCore", "ViewNode", "FluxTesting", "FluxClusterTesting", "ZeroMQ", "CZMQ", "NodeSupport", "Dispatcher", "StoreNode",
        "Devtools",
        "Cluster", "Bench", "Simulation", "Examples", "ExampleViews", "ArgumentParser", "Logging", "TOML", "Histogram", "Metrics",
        "Prometheus", "Atomics", "Collections", "Numerics", "Swift", "Foundation", "Dispatch", "Testing", "XCTest", "Synchronization",
        "PackageDescription",
    ]

    /// The app's name (a store's topic, what `dispatch` and `view` name) and the executable's: `poll`.
    var appName: String { name.lowercased() }
    /// The library with the app and its screen: `PollApp`.
    var appModule: String { name + "App" }
    /// The test target: `PollAppTests`.
    var testModule: String { appModule + "Tests" }
    /// The screen's type: `PollScreen`.
    var screenType: String { name + "Screen" }

    /// Every file of the package, by path relative to its directory.
    var files: [(path: String, contents: String)] {
        [
            ("Package.swift", manifest),
            ("Sources/\(appModule)/\(name).swift", app),
            ("Sources/\(appModule)/\(screenType).swift", screen),
            ("Sources/\(appName)/main.swift", main),
            ("Tests/\(testModule)/\(name)Tests.swift", tests),
            ("cluster.toml", clusterConfig),
            ("Makefile", makefile),
            ("README.md", readme),
            (".gitignore", gitignore),
        ]
    }

    /// Writes the package into `directory`, which must not exist or be empty: nothing is written
    /// otherwise, so an existing project is never overwritten in part.
    func write(to directory: String) throws -> [String] {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw CLIError("\(directory) exists and is not a directory; name a new or empty directory") }
            let entries = (try? manager.contentsOfDirectory(atPath: directory)) ?? []
            guard entries.isEmpty else {
                let shown = entries.sorted().prefix(3).joined(separator: ", ") + (entries.count > 3 ? ", …" : "")
                throw CLIError("\(directory) is not empty (it has \(shown)); name a new or empty directory")
            }
        }
        let root = URL(fileURLWithPath: directory)
        do {
            for file in files {
                let url = root.appendingPathComponent(file.path)
                try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(file.contents.utf8).write(to: url, options: .atomic)
            }
        } catch {
            throw CLIError("could not write the package in \(directory): \(error.localizedDescription)")
        }
        return files.map(\.path)
    }
}

import Foundation
import Testing

/// The layering docs/ARCHITECTURE.md promises, checked on the sources themselves: only the ZeroMQ
/// target touches libzmq's C module, which is libzmq's headers and nothing else, and the node cores, in a target of their own, reach for nothing
/// but the model and the logging API (no sockets, files or Foundation; the compiler holds them to
/// their dependencies) and cannot read the shells' clocks, which live in NodeSupport.
@Suite("Layering")
struct LayeringTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    static let sources = root.appendingPathComponent("Sources")

    static func swiftFiles(under directory: URL = sources) throws -> [URL] {
        let enumerator = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
        return enumerator.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    /// The modules a file imports, attributes (`@_spi(…)`) and import kinds (`import struct M.T`) aside.
    static func imports(of file: URL) throws -> [String] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").compactMap { line in
            var words = line.split(separator: " ").drop { $0.hasPrefix("@") }
            guard words.first == "import" else { return nil }
            words = words.dropFirst()
            let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "typealias", "func", "let", "var"]
            if let kind = words.first, kinds.contains(kind) { words = words.dropFirst() }
            return words.first.map { String($0.split(separator: ".")[0]) }
        }
    }

    @Test("only the ZeroMQ target imports CZMQ")
    func onlyZeroMQImportsCZMQ() throws {
        let files = try Self.swiftFiles()
        #expect(files.count > 50, "the sources were found")
        let offenders = try files.filter { try Self.imports(of: $0).contains("CZMQ") && !$0.path.contains("/Sources/ZeroMQ/") }
        #expect(offenders.isEmpty, "\(offenders.map(\.lastPathComponent))")
    }

    @Test("CZMQ is libzmq's headers and nothing else: no helpers of ours in its shim, no other library in its module map")
    func czmqIsLibzmqOnly() throws {
        let directory = Self.sources.appendingPathComponent("CZMQ")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["module.modulemap", "shim.h"])
        // The shim, comments and its include guard aside, includes libzmq's header: no other header, and
        // no function or macro of its own (those live in CLinux).
        var shim = try String(contentsOf: directory.appendingPathComponent("shim.h"), encoding: .utf8)
        shim.replace(try Regex(#"(?s)/\*.*?\*/"#), with: "")
        var lines = shim.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("//") }
        if let first = lines.first, first.hasPrefix("#ifndef "), lines.count >= 3, lines[1] == "#define " + first.dropFirst("#ifndef ".count),
            lines.last == "#endif"
        {
            lines = Array(lines[2..<(lines.count - 1)])
        }
        #expect(lines == ["#include <zmq.h>"], "\(lines)")
        // The module map names that shim and links libzmq alone.
        let map = try String(contentsOf: directory.appendingPathComponent("module.modulemap"), encoding: .utf8)
        let entries = map.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let headers = entries.filter { $0.split(separator: " ").contains { $0 == "header" || $0 == "umbrella" } }
        #expect(headers == [#"header "shim.h""#], "\(entries)")
        #expect(entries.filter { $0.hasPrefix("link") } == [#"link "zmq""#], "\(entries)")
    }

    @Test("the FluxCores target depends on FluxCore and swift-log's Logging only")
    func coresTargetDependencies() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let target = try Regex(#"\.target\(\s*name:\s*"FluxCores",\s*dependencies:\s*\[([^\]]*)\]"#)
        let match = try #require(manifest.firstMatch(of: target), "the FluxCores target is declared with its dependencies")
        let dependencies = try #require(match.output[1].substring)
        // The quoted names: every other piece between quotes.
        let pieces = dependencies.split(separator: "\"", omittingEmptySubsequences: false)
        let names = pieces.enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        #expect(Set(names) == ["FluxCore", "Logging", "swift-log"], "\(names)")
    }

    @Test("the cores import only FluxCore and Logging, and read no clock")
    func coresDoNoIO() throws {
        let files = try Self.swiftFiles(under: Self.sources.appendingPathComponent("FluxCores"))
        #expect(Set(files.map(\.lastPathComponent)).isSuperset(of: ["DispatcherCore.swift", "StoreCore.swift", "ViewCore.swift"]))
        for file in files {
            #expect(Set(try Self.imports(of: file)).isSubset(of: ["FluxCore", "Logging"]), "\(file.lastPathComponent)")
            // The shells' clocks are out of reach (see `clocksLiveInNodeSupport`). What is left is what every
            // module can see: the standard library's clocks and entropy, and the effects' clock in FluxCore.
            // Time reaches a core only as an argument (`NodeTime`).
            let text = try String(contentsOf: file, encoding: .utf8)
            for reading in ["ContinuousClock", "SuspendingClock", "EffectClock", "Date(", ".now()", "SystemRandomNumberGenerator"] {
                #expect(!text.contains(reading), "\(file.lastPathComponent) reads \(reading)")
            }
        }
        let shells = ["Dispatcher", "StoreNode", "ViewNode"].map { Self.sources.appendingPathComponent($0) }
        let left = try shells.flatMap { try Self.swiftFiles(under: $0) }.filter { $0.lastPathComponent.hasSuffix("Core.swift") }
        #expect(left.isEmpty, "cores left in a shell target: \(left.map(\.lastPathComponent))")
    }

    @Test("the shells' clocks are declared in NodeSupport, which the cores cannot import: the compiler keeps them out")
    func clocksLiveInNodeSupport() throws {
        // With `coresTargetDependencies`, this is the whole argument: `WallClock`, `MonotonicClock` and
        // `NodeTime.now()` exist only in a module the FluxCores target does not depend on, so a core that
        // reads one does not compile. FluxCore keeps the pure `NodeTime` the cores are handed.
        let declarations = ["enum WallClock", "enum MonotonicClock", "func now() -> NodeTime"]
        for file in try Self.swiftFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            for declaration in declarations where text.contains(declaration) {
                #expect(file.path.contains("/Sources/NodeSupport/"), "\(file.lastPathComponent) has \(declaration)")
            }
        }
        let clocks = try String(contentsOf: Self.sources.appendingPathComponent("NodeSupport/Clocks.swift"), encoding: .utf8)
        #expect(declarations.allSatisfy { clocks.contains($0) }, "NodeSupport/Clocks.swift declares the clocks")
    }
}

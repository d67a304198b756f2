import Foundation
import Testing

/// The layering docs/ARCHITECTURE.md promises, checked on the sources themselves: only the ZeroMQ
/// target touches libzmq's C module, which is libzmq's headers and nothing else, and the node cores,
/// in a target of their own, reach for nothing but the model and the logging API (no sockets, files
/// or Foundation; the compiler holds them to their dependencies) and cannot read the shells' clocks,
/// which live in NodeSupport. And the document's picture and table of targets are Package.swift's.
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

    /// Package.swift's targets, tests aside, each with the targets and the other packages' products it
    /// depends on.
    static func manifestTargets() throws -> [String: Dependencies] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let declarations = manifest.matches(of: /\.(target|executableTarget|systemLibrary|macro|testTarget)\(/)
        var targets: [String: Dependencies] = [:]
        for (index, declaration) in declarations.enumerated() where declaration.output.1 != "testTarget" {
            let end = index + 1 < declarations.count ? declarations[index + 1].range.lowerBound : manifest.endIndex
            let text = manifest[declaration.range.lowerBound..<end]
            let name = try #require(text.firstMatch(of: /name:\s*"([^"]+)"/), "\(text)").output.1
            var dependencies = Dependencies()
            if let list = text.firstMatch(of: /dependencies:\s*\[([^\]]*)\]/)?.output.1 {
                dependencies.products = Set(list.matches(of: /\.product\(name:\s*"([^"]+)"/).map { String($0.output.1) })
                let ours = list.replacing(/\.product\([^)]*\)/, with: "")
                dependencies.targets = Set(ours.matches(of: /"([^"]+)"/).map { String($0.output.1) })
            }
            targets[String(name)] = dependencies
        }
        return targets
    }

    struct Dependencies: Equatable, CustomStringConvertible {
        var targets: Set<String> = []
        var products: Set<String> = []
        var description: String { "\(targets.sorted()) and \(products.sorted())" }
    }

    /// docs/ARCHITECTURE.md's "One picture" section: the picture, and its table of each target's
    /// dependencies (the backquoted names of a row's second and third cells).
    static func architecture() throws -> (picture: String, table: [String: Dependencies]) {
        let text = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let start = try #require(text.range(of: "## One picture\n"), "the section is there").upperBound
        let section = text[start...].split(separator: "\n## ", maxSplits: 1).first ?? ""
        let picture = try #require(section.split(separator: "```", omittingEmptySubsequences: false).dropFirst().first, "a picture")
        var table: [String: Dependencies] = [:]
        for row in section.split(separator: "\n") where row.hasPrefix("| `") {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map { cell in
                Set(cell.matches(of: /`([^`]+)`/).map { String($0.output.1) })
            }
            guard cells.count >= 3, let name = cells[0].first else { continue }
            table[name] = Dependencies(targets: cells[1], products: cells[2])
        }
        return (String(picture), table)
    }

    @Test("ARCHITECTURE.md's picture names every target Package.swift declares")
    func pictureNamesEveryTarget() throws {
        let targets = try Self.manifestTargets()
        #expect(targets.count >= 19, "the targets were found: \(targets.keys.sorted())")
        let picture = try Self.architecture().picture
        let words = Set(picture.split { !($0.isLetter || $0.isNumber || $0 == "-") }.map(String.init))
        let missing = targets.keys.filter { !words.contains($0) }.sorted()
        #expect(missing.isEmpty, "targets the picture leaves out: \(missing)")
    }

    @Test("ARCHITECTURE.md's table of dependencies is Package.swift's, target by target")
    func tableIsTheManifest() throws {
        let targets = try Self.manifestTargets()
        let table = try Self.architecture().table
        #expect(Set(table.keys) == Set(targets.keys), "rows \(table.keys.sorted()), targets \(targets.keys.sorted())")
        for (name, dependencies) in targets.sorted(by: { $0.key < $1.key }) {
            #expect(table[name] == dependencies, "\(name): the table says \(table[name]?.description ?? "nothing"), Package.swift \(dependencies)")
        }
    }

    @Test("only the ZeroMQ target imports CZMQ and CSodium")
    func onlyZeroMQImportsCZMQ() throws {
        let files = try Self.swiftFiles()
        #expect(files.count > 50, "the sources were found")
        for module in ["CZMQ", "CSodium"] {
            let offenders = try files.filter { try Self.imports(of: $0).contains(module) && !$0.path.contains("/Sources/ZeroMQ/") }
            #expect(offenders.isEmpty, "\(module): \(offenders.map(\.lastPathComponent))")
        }
    }

    @Test(
        "CZMQ and CSodium are their library's headers and nothing else: no helpers of ours in a shim, no other library in a module map",
        arguments: [("CZMQ", "zmq.h", "zmq"), ("CSodium", "sodium.h", "sodium")])
    func systemModulesAreHeadersOnly(module: String, header: String, library: String) throws {
        let directory = Self.sources.appendingPathComponent(module)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["module.modulemap", "shim.h"])
        // The shim, comments and its include guard aside, includes the library's header: no other header,
        // and no function or macro of its own (those live in CLinux).
        var shim = try String(contentsOf: directory.appendingPathComponent("shim.h"), encoding: .utf8)
        shim.replace(try Regex(#"(?s)/\*.*?\*/"#), with: "")
        var lines = shim.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("//") }
        if let first = lines.first, first.hasPrefix("#ifndef "), lines.count >= 3, lines[1] == "#define " + first.dropFirst("#ifndef ".count),
            lines.last == "#endif"
        {
            lines = Array(lines[2..<(lines.count - 1)])
        }
        #expect(lines == ["#include <\(header)>"], "\(lines)")
        // The module map names that shim and links the library alone.
        let map = try String(contentsOf: directory.appendingPathComponent("module.modulemap"), encoding: .utf8)
        let entries = map.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let headers = entries.filter { $0.split(separator: " ").contains { $0 == "header" || $0 == "umbrella" } }
        #expect(headers == [#"header "shim.h""#], "\(entries)")
        #expect(entries.filter { $0.hasPrefix("link") } == ["link \"\(library)\""], "\(entries)")
    }

    @Test("the NodeCores target depends on FluxCore and swift-log's Logging only")
    func coresTargetDependencies() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let target = try Regex(#"\.target\(\s*name:\s*"NodeCores",\s*dependencies:\s*\[([^\]]*)\]"#)
        let match = try #require(manifest.firstMatch(of: target), "the NodeCores target is declared with its dependencies")
        let dependencies = try #require(match.output[1].substring)
        // The quoted names: every other piece between quotes.
        let pieces = dependencies.split(separator: "\"", omittingEmptySubsequences: false)
        let names = pieces.enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        #expect(Set(names) == ["FluxCore", "Logging", "swift-log"], "\(names)")
    }

    @Test(
        "what an app's package builds for its reducers and their tests (FluxFormat, FluxProtocol, FluxCore, FluxWire, FluxTesting) needs no node, socket or platform module"
    )
    func appFacingProductsAreLight() throws {
        let targets = try Self.manifestTargets()
        #expect(
            targets["FluxCore"]?.targets == ["FluxFormat", "FluxProtocol"] && targets["FluxCore"]?.products == [],
            "\(targets["FluxCore"].map(\.description) ?? "none")")
        // The format depends on nothing, and the protocol on the format alone: a client in another process
        // can build either without the programming model.
        #expect(
            targets["FluxFormat"]?.targets == [] && targets["FluxFormat"]?.products == [], "\(targets["FluxFormat"].map(\.description) ?? "none")")
        #expect(
            targets["FluxProtocol"]?.targets == ["FluxFormat"] && targets["FluxProtocol"]?.products == [],
            "\(targets["FluxProtocol"].map(\.description) ?? "none")")
        #expect(
            targets["FluxTesting"]?.targets == ["FluxCore"] && targets["FluxTesting"]?.products == [],
            "\(targets["FluxTesting"].map(\.description) ?? "none")")
        #expect(targets["FluxWire"]?.targets == ["FluxCore", "FluxMacros"], "\(targets["FluxWire"].map(\.description) ?? "none")")
        // Foundation, Synchronization and Testing ship with the toolchain on every platform; Glibc, the
        // C shims and libzmq do not, so a reducer written and tested on a Mac builds there too.
        let allowed: Set<String> = ["FluxCore", "FluxFormat", "FluxProtocol", "FluxMacros", "Foundation", "Synchronization", "Testing"]
        for target in ["FluxFormat", "FluxProtocol", "FluxCore", "FluxWire", "FluxTesting"] {
            let files = try Self.swiftFiles(under: Self.sources.appendingPathComponent(target))
            #expect(!files.isEmpty, "\(target) has sources")
            for file in files {
                let imports = Set(try Self.imports(of: file))
                #expect(imports.isSubset(of: allowed), "\(target)/\(file.lastPathComponent) imports \(imports.subtracting(allowed).sorted())")
                let text = try String(contentsOf: file, encoding: .utf8)
                #expect(!text.contains("Glibc."), "\(target)/\(file.lastPathComponent) calls Glibc by name")
            }
        }
    }

    @Test("the stock binary builds no swift-syntax: nothing zflux or zflux-allocations depends on, directly or not, is the macro")
    func stockBinaryBuildsNoMacro() throws {
        let targets = try Self.manifestTargets()
        for executable in ["zflux", "zflux-allocations"] {
            var reached: Set<String> = []
            var products: Set<String> = []
            var pending = [executable]
            while let name = pending.popLast() {
                guard reached.insert(name).inserted else { continue }
                let dependencies = try #require(targets[name], "\(name) is a target of Package.swift")
                products.formUnion(dependencies.products)
                pending += dependencies.targets
            }
            #expect(reached.contains("Examples") && reached.count > 5, "\(executable) reaches \(reached.sorted())")
            #expect(
                reached.isDisjoint(with: ["FluxWire", "FluxMacros"]),
                "\(executable) reaches \(reached.intersection(["FluxWire", "FluxMacros"]).sorted())")
            // swift-syntax's products are all named Swift…; no other package's is.
            #expect(!products.contains { $0.hasPrefix("Swift") }, "\(executable) builds \(products.filter { $0.hasPrefix("Swift") }.sorted())")
        }
    }

    @Test("a single dispatcher links no etcd client: the Dispatcher target neither depends on Leadership nor imports it or swift-nio")
    func dispatcherLinksNoEtcdClient() throws {
        let targets = try Self.manifestTargets()
        let dispatcher = try #require(targets["Dispatcher"])
        #expect(!dispatcher.targets.contains("Leadership") && dispatcher.products.isEmpty, "\(dispatcher)")
        for file in try Self.swiftFiles(under: Self.sources.appendingPathComponent("Dispatcher")) {
            let imports = try Self.imports(of: file)
            #expect(!imports.contains { $0 == "Leadership" || $0.hasPrefix("NIO") }, "\(file.lastPathComponent) imports \(imports)")
        }
    }

    @Test("the cores import only FluxCore and Logging, and read no clock")
    func coresDoNoIO() throws {
        let files = try Self.swiftFiles(under: Self.sources.appendingPathComponent("NodeCores"))
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
        // `NodeTime.now()` exist only in a module the NodeCores target does not depend on, so a core that
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

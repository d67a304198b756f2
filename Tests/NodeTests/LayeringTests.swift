import Foundation
import Testing

/// The layering docs/ARCHITECTURE.md promises, checked on the sources themselves: only the ZeroMQ
/// target touches libzmq's C module, and the node cores do no I/O (no sockets, and not even Foundation,
/// whose clocks and files they must not reach for).
@Suite("Layering")
struct LayeringTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources").standardized

    static func swiftFiles() throws -> [URL] {
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        return enumerator.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    static func imports(of file: URL) throws -> [String] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            .compactMap { line in line.hasPrefix("import ") ? String(line.dropFirst("import ".count)) : nil }
    }

    @Test("only the ZeroMQ target imports CZMQ")
    func onlyZeroMQImportsCZMQ() throws {
        let files = try Self.swiftFiles()
        #expect(files.count > 50, "the sources were found")
        let offenders = try files.filter { try Self.imports(of: $0).contains("CZMQ") && !$0.path.contains("/Sources/ZeroMQ/") }
        #expect(offenders.isEmpty, "\(offenders.map(\.lastPathComponent))")
    }

    @Test("the node cores import only FluxCore and Logging")
    func coresDoNoIO() throws {
        let nodes: Set = ["Dispatcher", "StoreNode", "ViewNode"]
        let cores = try Self.swiftFiles().filter {
            nodes.contains($0.deletingLastPathComponent().lastPathComponent) && $0.lastPathComponent.hasSuffix("Core.swift")
        }
        #expect(Set(cores.map(\.lastPathComponent)) == ["DispatcherCore.swift", "StoreCore.swift", "ViewCore.swift"])
        for core in cores {
            #expect(Set(try Self.imports(of: core)).isSubset(of: ["FluxCore", "Logging"]), "\(core.lastPathComponent)")
        }
    }
}

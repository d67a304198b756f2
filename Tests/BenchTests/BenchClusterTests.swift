import Cluster
import Foundation
import NodeSupport
import Testing

@testable import Bench

@Suite("The cluster a bench starts")
struct BenchClusterTests {
    /// What the bench wrote by hand before its config was a value: the same options must give the same
    /// cluster.
    static let handWritten = """
        [cluster]
        transport = "tcp"
        base_port = 6000
        codec = "json"
        high_water_mark = 1000000

        [journal]
        fsync = "none"
        snapshot_every = 1000000000

        [[store]]
        name = "ledger-1"
        app = "ledger"

        [[store]]
        name = "ledger-2"
        app = "ledger"
        effects = false
        """

    @Test(
        "--floor without zflux-floor beside the binary is refused before anything starts, saying how to build it (it used to fail after the whole load)"
    )
    func floorProgramIsCheckedFirst() throws {
        let directory = NSTemporaryDirectory() + "zflux-floorless-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = BenchOptions(executable: directory + "/poll")
        options.floor = true
        do {
            _ = try BenchSession(options: options)
            Issue.record("a session started without zflux-floor")
        } catch let error as BenchError {
            #expect(error.message.contains("`swift build --product zflux-floor`"), "\(error)")
            #expect(error.message.contains("nothing was run"), "\(error)")
        }
    }

    @Test("its config is a value, written as TOML that reads back as the same config and the same endpoints")
    func configRoundTrips() throws {
        var options = BenchOptions(executable: "/nonexistent/zflux")
        (options.transport, options.basePort, options.codec, options.fsync, options.stores) = (.tcp, 6000, .json, .none, 2)
        let config = BenchCluster.config(options: options, workload: BenchSession.workload(options))
        let written = try config.tomlText()
        let read = try ClusterConfig.parse(written, source: "bench.toml")
        #expect(read.cluster == config.cluster && read.journal == config.journal && read.stores == config.stores, "\(written)")
        #expect(read.stores?.map(\.name) == ["ledger-1", "ledger-2"] && read.stores?.map(\.effects) == [nil, false])

        let old = try ClusterConfig.parse(BenchClusterTests.handWritten, source: "by hand")
        #expect(old.cluster == read.cluster && old.journal == read.journal && old.stores == read.stores)
        func topology(_ config: ClusterConfig) throws -> Topology {
            try config.topology(runDirectory: "/tmp/bench", transportOverride: nil, basePortOverride: nil, apps: nil)
        }
        #expect(try topology(read) == topology(old))
    }

    @Test("node pids come from the run directory's pid files, by node name")
    func nodePids() throws {
        let directory = RunDirectory(FileManager.default.temporaryDirectory.appendingPathComponent("bench-pids-\(getpid())").path)
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        #expect(directory.nodePids().isEmpty, "no cluster ran there")
        try FileManager.default.createDirectory(atPath: directory.pidDirectory, withIntermediateDirectories: true)
        try "12".write(toFile: directory.pidFile(of: "dispatcher"), atomically: true, encoding: .utf8)
        try "13\n".write(toFile: directory.pidFile(of: "store-ledger-1"), atomically: true, encoding: .utf8)
        try "not a pid".write(toFile: directory.pidFile(of: "store-broken"), atomically: true, encoding: .utf8)
        #expect(directory.nodePids() == ["dispatcher": 12, "store-ledger-1": 13])
    }
}

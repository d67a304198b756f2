import Cluster
import Foundation
import NodeSupport

/// The cluster a bench run starts when it is not attached to one: `zflux cluster up` as a child
/// process in the bench's directory, given a config built as a value. It dies with the bench: it
/// watches the bench's pid, and the bench stops it when it ends.
final class BenchCluster {
    let child: BenchChild
    /// Where its nodes listen, as `cluster up` wrote it to the run directory.
    let topology: Topology
    /// Each node's pid by node name (`dispatcher`, `store-NAME`), for the CPU time it uses.
    let nodePids: [String: Int32]

    /// One store per app the workload drives (`stores` copies of each, the copies replicas without
    /// effects) and one for each app those read; queues and snapshots out of the measurement's way.
    static func config(options: BenchOptions, workload: Workload) -> ClusterConfig {
        var apps = workload.apps
        var index = 0
        while index < apps.count {
            let hosted = options.apps.first { $0.name == apps[index] }
            for read in hosted?.reads ?? [] where !apps.contains(read) { apps.append(read) }
            index += 1
        }
        var stores: [ClusterConfig.StoreSection] = []
        for app in apps {
            let copies = workload.apps.contains(app) ? options.stores : 1
            for copy in 1...copies { stores.append(.init(name: "\(app)-\(copy)", app: app, effects: copy > 1 ? false : nil)) }
        }
        let cluster = ClusterConfig.ClusterSection(
            transport: options.transport.rawValue, basePort: options.basePort, highWaterMark: 1_000_000, codec: options.codec.rawValue)
        return ClusterConfig(
            cluster: cluster,
            journal: .init(fsync: options.fsync.rawValue, snapshotEvery: 1_000_000_000),
            stores: stores)
    }

    /// Writes the config to `directory`, starts the cluster there and waits until it is up. A cluster
    /// that did not come up within a minute is stopped, and the error says what it last said.
    init(options: BenchOptions, workload: Workload, directory: String) throws {
        let path = directory + "/bench.toml"
        try BenchCluster.config(options: options, workload: workload).tomlText().write(toFile: path, atomically: true, encoding: .utf8)
        let child = try BenchChild(
            name: "cluster", executable: options.executable,
            arguments: [
                "cluster", "up", "--config", path, "--run-dir", directory, "--log-level", "warning", "--supervisor-pid", "\(getpid())",
            ] + (options.ha ? ["--ha"] : []) + (options.pinCPUs ? ["--pin-cpus"] : []))
        do {
            _ = try child.waitForLine(containing: "cluster up in", seconds: 60)
            topology = try Topology.load(runDirectory: directory)
        } catch {
            child.stop()
            throw error
        }
        self.child = child
        nodePids = RunDirectory(directory).nodePids()
    }

    func stop() { child.stop() }
}

import FluxCore
import Foundation

/// The layout of a cluster's run directory, spelled once: what `cluster up` writes there and what
/// every other command, node and test reads.
///
/// ```
/// RUN_DIR/
///   cluster.json        the topology (Topology.fileName), while the cluster runs
///   cluster.last.json   the topology of the cluster that last ran here, kept when it stops
///   supervisor.pid      the supervisor's pid, while it runs
///   restarts.json       restarts per node, for `zflux top`
///   logs/NODE.log       each node's stderr
///   data/STORE/         files a store's effects write (a FileClient's live directory)
///   pids/NODE.pid       each node's pid
///   journal/            the dispatcher's journal (default; [journal] directory)
///   snapshots/          the stores' snapshots (default; [journal] snapshot_directory)
///   *.sock              ipc endpoints
/// ```
public struct RunDirectory: Sendable, Equatable {
    public var path: String

    public init(_ path: String) { self.path = path }

    public var topologyFile: String { path + "/" + Topology.fileName }
    /// The topology of the cluster that last ran here: `cluster up` renames `cluster.json` to it when
    /// it stops, so the commands that read a stopped cluster's files (time travel, `journal export`,
    /// `journal compact`) still know its stores.
    package var lastTopologyFile: String { path + "/" + Topology.lastRunFileName }
    public var supervisorPidFile: String { path + "/supervisor.pid" }
    public var restartsFile: String { path + "/restarts.json" }
    public var logDirectory: String { path + "/logs" }
    /// Where a store's effects keep files of their own (the primes app's saved favourites).
    public func dataDirectory(of store: String) -> String { path + "/data/" + store }
    public var pidDirectory: String { path + "/pids" }
    /// Where stores keep what must outlive their process besides snapshots (their crash markers).
    public var stateDirectory: String { path + "/state" }
    /// The crash marker of a store started by the supervisor (``CrashMarker``).
    package func crashMarker(of store: String) -> String { stateDirectory + "/" + store + ".applying" }

    /// The default journal and snapshot directories, relative to the run directory.
    public static let journalName = Settings.Journal.directory.fallback
    public static let snapshotsName = Settings.Journal.snapshotDirectory.fallback

    /// Where a node started by the supervisor logs (`dispatcher`, `store-NAME`).
    public func log(of node: String) -> String { logDirectory + "/" + node + ".log" }
    public func pidFile(of node: String) -> String { pidDirectory + "/" + node + ".pid" }

    /// Each node's pid by node name (`dispatcher`, `store-NAME`), as the supervisor last wrote them
    /// (empty when no cluster ran here).
    public func nodePids() -> [String: Int32] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: pidDirectory)) ?? []
        var pids: [String: Int32] = [:]
        for file in files where file.hasSuffix(".pid") {
            let node = String(file.dropLast(".pid".count))
            let text = try? String(contentsOfFile: pidFile(of: node), encoding: .utf8)
            if let pid = text.flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) { pids[node] = pid }
        }
        return pids
    }

    /// Creates the run directory if needed and makes it 0700 (also when it existed): its ipc socket
    /// files, journal and snapshots are this user's alone. Every entry point that runs a node calls it.
    public func makePrivate() throws { try RunDirectory.makePrivateDirectory(path) }

    /// Creates `path` (and its parents) if needed and sets it to 0700, whatever the umask.
    public static func makePrivateDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard chmod(path, 0o700) == 0 else { throw NodeError("cannot make \(path) private (chmod 0700: \(String(cString: strerror(errno))))") }
    }

    /// Restarts per node, as the supervisor last wrote them (empty when it never restarted one).
    public func restarts() -> [String: Int] {
        guard let data = FileManager.default.contents(atPath: restartsFile) else { return [:] }
        return (try? JSONDecoder().decode([String: Int].self, from: data)) ?? [:]
    }
}

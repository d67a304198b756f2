import FluxCore
import NodeSupport

/// What one load test runs: the parsed options of `zflux bench`, as plain values.
public struct BenchOptions: Sendable {
    /// A running cluster to measure instead of starting one.
    public struct Attached: Sendable {
        public var runDirectory: String
        public var topology: Topology
        public var security: Security.Settings?
        public init(runDirectory: String, topology: Topology, security: Security.Settings?) {
            self.runDirectory = runDirectory
            self.topology = topology
            self.security = security
        }
    }

    public var transport: Topology.Transport = .ipc
    /// tcp: the first port used (the floor's relays use ports from `basePort + 100`).
    public var basePort = 5670
    public var stores = 1
    /// Views (subscribers in the bench process) per store.
    public var views = 1
    public var clients = 1
    /// Actions per second (with `max`: the first rate tried).
    public var rate: Double = 10_000
    /// Search for the highest rate with zero loss.
    public var max = false
    public var duration: Double = 5
    public var warmUp: Double = 1
    public var payloadBytes = 64
    public var codec: WireCodec.Format = .binary
    public var fsync: FsyncPolicy = Defaults.fsync
    public var stateItems = 10
    /// Also measure raw relays in the same topology.
    public var floor = false
    /// Keep each node's threads on one CPU (`cluster up --pin-cpus`), and the floor's sequencer and
    /// relays likewise, each on the CPU its zflux counterpart takes.
    package var pinCPUs = true
    /// Run the cluster with a dispatcher pair (a private etcd, sync replication): `cluster up --ha`.
    public var ha = false
    public var attach: Attached? = nil
    /// Keep the temporary cluster's directory.
    public var keep = false
    /// The `zflux` binary that runs the cluster and the floor's relays: the user's own binary, which
    /// hosts their apps.
    public var executable: String
    /// The apps that binary hosts: payloads of their actions are encoded (and checked) by the app
    /// itself in `codec`; an app not among them gets JSON payloads, which every node reads and the
    /// dispatcher judges.
    public var apps: [any AnyApp] = []
    /// What to dispatch (nil: the stock ledger bench, sized by `stateItems` and `payloadBytes`).
    public var workload: Workload? = nil

    public init(executable: String) { self.executable = executable }
}

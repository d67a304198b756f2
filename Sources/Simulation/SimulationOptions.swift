import FluxCore
import NodeCores

/// What to run: everything else comes from the seed.
public struct SimulationOptions: Sendable {
    /// A rule broken on purpose, to show the checker catches it.
    public var canary: Canary? = nil
    /// How long faults are injected (simulated µs); then everything heals.
    public var faultPhaseMicros: UInt64 = 2_000_000
    /// How long, after healing, every store and view may take to reach the head.
    public var settleMicros: UInt64 = 30_000_000
    /// New actions each client sends during the fault phase.
    public var actionsPerClient = 30
    /// Keep a readable trace (slower; a failing seed is run again with it).
    public var traceLength = 0
    /// High availability (docs/OPERATIONS.md, High availability): two dispatchers, each with its own journal, and a lease service
    /// (etcd) they campaign at; the winner leads with a `sync` standby, the other follows its journal.
    public var ha = false
    /// Some actions are poison: the echo app's reducer "traps" on every 23rd ping (the store dies at
    /// once). Each store that dies twice on one asks for it to be quarantined, and every replica must
    /// still end equal to the history reduced without the poison actions.
    public var poison = false
    /// The disk and the network lie (`zflux simulate --storage-faults`): syncs fail with EIO and lose
    /// what they covered, a synced bit flips, a write is misdirected, the disk fills up, syncs are
    /// slow, sends fail and queues fill (``SimDisk``).
    public var storageFaults = false
    /// The pair starts from a single dispatcher's journal (`zflux simulate --from-single`; docs/OPERATIONS.md,
    /// From a single dispatcher to a pair): dispatcher 1's disk holds the journal a single dispatcher
    /// kept, every record of it acknowledged; dispatcher 2's is empty. In half the seeds dispatcher 1 is
    /// down when dispatcher 2 starts, and the empty one leads first: dispatcher 1 must refuse to drop
    /// those records, and stops; the operator then stops dispatcher 2, starts dispatcher 1 and lets it
    /// lead, then starts dispatcher 2, as OPERATIONS says. Implies ``ha``.
    public var fromSingle = false
    /// The leading dispatcher pipelines its syncs (`zflux simulate --sync-threads`, as
    /// `ZFLUX_SYNC_THREADS=2` runs it): two syncs of its journal in flight at once, returning in either
    /// order, each making durable what the journal held when it began (seeds with fsync `batch`).
    public var syncThreads = false
    /// The apps under test and what the clients dispatch to them.
    public var apps: SimulatedApps

    public init(apps: SimulatedApps) { self.apps = apps }
}

extension Canary {
    /// A rule of high availability: its canary runs in the HA cluster (``SimulationOptions/ha``).
    public var needsHA: Bool {
        switch self {
        case .ackBeforeReplicated, .standbyAcceptsOldEpoch, .oldLeaderAcksAfterLease, .dropsAcknowledged: true
        case .durableBeforeAck, .dedup, .gapRepair, .effectsOnlyLive, .syncJournalOnOpen, .releaseBeforeSync, .scheduleFiresTwice,
            .trustsFailedFsync, .skipsCorruptRecord:
            false
        }
    }

    /// A rule about a pair started from a single dispatcher's journal: its canary runs with
    /// ``SimulationOptions/fromSingle``.
    public var needsFromSingle: Bool { self == .dropsAcknowledged }

    /// A rule about the disk lying: its canary runs with ``SimulationOptions/storageFaults``.
    public var needsStorageFaults: Bool {
        switch self {
        case .trustsFailedFsync, .skipsCorruptRecord: true
        default: false
        }
    }
}

/// The apps a simulation runs, and the mix of actions its clients draw from. Each app of the mix gets a
/// store of its own; the first also gets a replica without effects (replicas of one app must agree);
/// an echo app of the simulator's own, whose effects answer every ping, checks that effects run once.
public struct SimulatedApps: Sendable {
    /// The apps by name (the mix's apps, and any they read).
    public var apps: [any AnyApp]
    public var mix: ActionMix

    /// `apps` with `mix`; without a mix, every app's own examples (``ActionMix/examples(of:)``).
    public init(apps: [any AnyApp], mix: ActionMix? = nil) {
        self.apps = apps
        self.mix = mix ?? ActionMix.examples(of: apps)
    }

    /// The echo app's share of the draws.
    static let echoWeight = 3

    var stores: [Simulation.StoreSpec] {
        var specs: [Simulation.StoreSpec] = []
        for (index, app) in mix.apps.enumerated() {
            specs.append(.init(name: app, app: app, runsEffects: true))
            if index == 0 { specs.append(.init(name: app + "-replica", app: app, runsEffects: false)) }
        }
        return specs + [.init(name: "echo", app: "echo", runsEffects: true)]
    }
}

import FluxCore

/// The first invariant a seed broke.
public struct SimulationFailure: Sendable, Equatable {
    public var invariant: String
    public var detail: String
    public var atMicros: UInt64
    /// The last events before it (when the run kept a trace).
    public var trace: [String]
}

/// What one seed did.
public struct SimulationResult: Sendable {
    public var seed: UInt64
    public var fsync: FsyncPolicy
    public var faultsInjected = 0
    public var invariantChecks = 0
    /// Actions quarantined (with poison on: ``SimulationOptions/poison``), and stores that died on one.
    public var quarantined = 0
    public var poisonCrashes = 0
    public var actionsAcknowledged = 0
    public var head: UInt64 = 0
    public var events = 0
    public var simulatedMicros: UInt64 = 0
    public var traceHash: UInt64 = 0
    /// HA: how many times a dispatcher won the lease and led (the first leader included).
    public var leadershipsWon = 0
    /// Schedules the history made (requests sequenced), and what became of them: fired, cancelled,
    /// replaced by a later request under their id, or still pending at the end (not due yet), over every
    /// app: the sums of ``apps``, which counts them.
    public var schedulesMade: Int { total.schedulesMade }
    public var schedulesFired: Int { total.schedulesFired }
    public var schedulesCancelled: Int { total.schedulesCancelled }
    public var schedulesReplaced: Int { total.schedulesReplaced }
    public var schedulesPending: Int { total.schedulesPending }
    private var total: AppCounts { apps.values.reduce(into: AppCounts()) { $0.add($1) } }
    /// The same, and the actions the history holds, per app by name: the user's apps and the
    /// simulator's own (``SimulationResult/simulatorApps``), told apart in the report.
    public var apps: [String: AppCounts] = [:]
    public var failure: SimulationFailure?
    /// Why the seed ended with the cluster stopped on purpose, not broken: a single dispatcher that
    /// refuses to serve a corrupt journal (``SimulationOptions/storageFaults``).
    public var stopped: String?
    /// HA: members that refused to drop records their leader lacked (``StandbyCore/refusalToDrop(after:stampAfter:)``),
    /// each then led first by the operator's hand.
    public var refusalsToDrop = 0
    /// Times a dispatcher exited on an error of its disk (a failed sync, a read) and was started again.
    public var diskErrorRestarts = 0
    /// Syncs the simulated disks failed (EIO).
    public var syncFailures = 0
    /// With ``SimulationOptions/syncThreads``: what the leaders' sync lanes went through.
    public var lanes = LaneCounts()

    /// The moments of the pipelined group commit that a seed reached, counted to show that the seeds
    /// explore them.
    public struct LaneCounts: Sendable, Equatable {
        /// Syncs handed to a lane.
        public var syncs = 0
        /// Times the loop waited for a sync in flight (both lanes busy, or a checkpoint due).
        public var waits = 0
        /// Syncs that returned while an older one was still in flight.
        public var outOfOrder = 0
        /// Lanes' syncs that failed (EIO) while the other lane's was in flight.
        public var failedWhileOtherInFlight = 0
        /// Writes the full disk refused while a sync was in flight.
        public var fullWhileInFlight = 0
        /// Power cuts with a sync in flight (its return never heard).
        public var powerCutsWhileInFlight = 0

        public init() {}

        /// Adds `other`'s counts to these.
        public mutating func add(_ other: LaneCounts) {
            syncs += other.syncs
            waits += other.waits
            outOfOrder += other.outOfOrder
            failedWhileOtherInFlight += other.failedWhileOtherInFlight
            fullWhileInFlight += other.fullWhileInFlight
            powerCutsWhileInFlight += other.powerCutsWhileInFlight
        }
    }

    /// The apps the simulator adds to the user's: its echo app, whose effects and schedules check the
    /// framework's promises (effects run once, schedules fire once) whatever the user's apps do.
    public static let simulatorApps: Set<String> = [EchoApp.appName]

    /// One app's share of a history: its actions, and the schedules made for it and what became of them.
    public struct AppCounts: Sendable, Equatable {
        public var actions = 0
        public var schedulesMade = 0
        public var schedulesFired = 0
        public var schedulesCancelled = 0
        public var schedulesReplaced = 0
        public var schedulesPending = 0

        public init() {}

        /// Adds `other`'s counts to these.
        public mutating func add(_ other: AppCounts) {
            actions += other.actions
            schedulesMade += other.schedulesMade
            schedulesFired += other.schedulesFired
            schedulesCancelled += other.schedulesCancelled
            schedulesReplaced += other.schedulesReplaced
            schedulesPending += other.schedulesPending
        }
    }
}

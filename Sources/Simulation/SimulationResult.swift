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
    /// replaced by a later request under their id, or still pending at the end (not due yet).
    public var schedulesMade = 0
    public var schedulesFired = 0
    public var schedulesCancelled = 0
    public var schedulesReplaced = 0
    public var schedulesPending = 0
    public var failure: SimulationFailure?
}

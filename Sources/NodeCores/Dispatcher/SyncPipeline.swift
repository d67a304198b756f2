/// The dispatcher's pipelined group commit, as decisions: which syncs of the journal are in flight (one
/// lane each), the seq each will prove durable once it returns, the newest seq proven, and how far the
/// interpreter has been told. `DispatcherLoop` (whose lanes are threads running fdatasync) asks it: may
/// a sync start now, must the loop wait for one to return first, what to tell the interpreter now
/// (issue 54: no decision in a shell). Pure; `PipelinedSync` (Journaling) carries its decisions out
/// for the real loop and for the simulator's dispatcher (`zflux simulate --sync-threads`) alike.
///
/// A sync covers what the journal held when it started: an fdatasync makes durable every page written
/// before it was issued, so one that returns proves its seq even while an older one is still in
/// flight, and syncs may return in either order. What the interpreter hears only grows.
package struct SyncPipeline: Equatable, Sendable {
    /// What the caller does to sync the journal now.
    package enum Next: Equatable, Sendable {
        /// Hand a sync to `lane`, which is idle, and go on.
        case start(lane: Int)
        /// Every lane is busy: wait for a sync to return (at most ``lanes`` in flight; meanwhile the
        /// intake pushes back on clients), then ask again.
        case waitForOne
        /// Wait for every sync in flight, then sync in place (a checkpoint must cover the journal
        /// through its head exactly); report it with ``syncedInPlace(through:)``.
        case waitForAllThenSyncInPlace
    }

    /// The seq each lane's sync in flight will prove (nil: the lane is idle).
    package private(set) var covering: [UInt64?]
    /// The newest seq a sync that returned (or one in place) proved durable.
    package private(set) var proven: UInt64
    /// The newest seq the interpreter has been told is durable.
    package private(set) var reported: UInt64

    /// `lanes` syncs at most in flight; the journal is durable through `durable` (and the interpreter
    /// knows it) to begin with.
    package init(lanes: Int, durable: UInt64) {
        precondition(lanes >= 1, "a pipeline has at least one lane, not \(lanes)")
        covering = Array(repeating: nil, count: lanes)
        proven = durable
        reported = durable
    }

    package var lanes: Int { covering.count }
    /// How many syncs are in flight.
    package var inFlight: Int { covering.count(where: { $0 != nil }) }
    /// The first lane with no sync in flight, if any.
    package var idleLane: Int? { covering.firstIndex { $0 == nil } }
    /// The newest seq proven or that a sync in flight will prove: a sync started now is worth it only
    /// for what the journal holds past it.
    package var newestCovered: UInt64 { covering.reduce(proven) { max($0, $1 ?? 0) } }
    /// Something proven that the interpreter has not heard yet.
    package var hasNews: Bool { proven > reported }

    /// What to do to sync the journal now; `checkpointDue` when the journal must be synced through its
    /// head before a checkpoint is written.
    package func next(checkpointDue: Bool) -> Next {
        if checkpointDue { return .waitForAllThenSyncInPlace }
        guard let lane = idleLane else {
            assert(inFlight == lanes, "no idle lane: all \(lanes) busy")
            return .waitForOne
        }
        return .start(lane: lane)
    }

    /// A sync started on `lane` (idle until now); it will prove `seq` durable once it returns.
    package mutating func started(lane: Int, covering seq: UInt64) {
        precondition(lane >= 0 && lane < lanes, "lane \(lane) of \(lanes)")
        precondition(covering[lane] == nil, "lane \(lane) has a sync in flight already")
        precondition(seq >= proven, "a sync through \(seq) starts after seq \(proven) was proven: the journal only grows")
        covering[lane] = seq
    }

    /// The sync on `lane` returned; `proved` is the seq it proved durable (nil: none, the journal was
    /// cut back since it started). It proves at most what it covered when it started.
    package mutating func returned(lane: Int, proved: UInt64?) {
        precondition(lane >= 0 && lane < lanes, "lane \(lane) of \(lanes)")
        guard let covered = covering[lane] else { preconditionFailure("lane \(lane) had no sync in flight") }
        covering[lane] = nil
        guard let proved else { return }
        precondition(proved <= covered, "the sync on lane \(lane) covered seq \(covered), not \(proved)")
        proven = max(proven, proved)
    }

    /// The journal is durable through `seq` without a sync of the pipeline (a segment's roll synced it
    /// in place, say); the interpreter hears it with the next ``takeReport()``.
    package mutating func provenInPlace(_ seq: UInt64) {
        proven = max(proven, seq)
    }

    /// The caller synced in place through `seq` and tells the interpreter so itself (its `sync` said
    /// true): proven and reported both.
    package mutating func syncedInPlace(through seq: UInt64) {
        assert(inFlight == 0, "a sync in place after every sync in flight returned: \(inFlight) in flight")
        proven = max(proven, seq)
        reported = max(reported, seq)
    }

    /// What to tell the interpreter now (the newest seq proven, once), or nil when it knows it already.
    package mutating func takeReport() -> UInt64? {
        guard hasNews else { return nil }
        assert(proven > reported, "the interpreter hears a seq only once, and only a newer one")
        reported = proven
        return reported
    }

    /// The journal was cut back to `seq` (a standby dropping a run): nothing past it is proven or
    /// reported any longer, and the syncs in flight will prove nothing past it either (their caller
    /// reports them with `proved: nil` when they covered what was cut).
    package mutating func cut(to seq: UInt64) {
        proven = min(proven, seq)
        reported = min(reported, seq)
        for lane in covering.indices { covering[lane] = covering[lane].map { min($0, seq) } }
        assert(newestCovered <= seq, "after a cut to \(seq), nothing past it is covered")
    }
}

import FluxCore

/// What a dispatcher answers a store's REPLAY-REQUEST with: one of the ``DispatcherCore``'s machines.
/// It plans (``ReplayPlan``); the shell's ``ReplayScheduler`` serves the plan a slice per turn.
///
/// Only what is committed is replayed (a store must never apply what a crash could take back), and
/// nothing while a new leader settles: requests that come then are kept, the newest per peer, and
/// planned once it has.
struct ReplayPlanner {
    /// The history served, the oldest seq the journal holds, and how much one answer holds.
    let history: HistoryID
    var firstSeq: UInt64 {
        willSet { precondition(newValue >= firstSeq, "the journal's first seq only moves up") }
    }
    let batchSize: Int
    let batchesPerRequest: Int
    /// Replay requests that came while a new leader settled, the newest per peer.
    private(set) var deferred: [(request: Message, peer: [UInt8])] = []
    static let deferredLimit = 1024

    init(history: HistoryID, firstSeq: UInt64, batchSize: Int, batchesPerRequest: Int) {
        precondition(firstSeq >= 1, "seqs start at 1")
        precondition(batchSize > 0 && batchesPerRequest > 0, "a replay answer holds something")
        (self.history, self.firstSeq, self.batchSize, self.batchesPerRequest) = (history, firstSeq, batchSize, batchesPerRequest)
    }

    enum Verdict: Equatable {
        /// What is asked for is gone (older segments removed): this REPLAY-END says so, instead of an
        /// empty answer the store would ask again forever.
        case gone(Message)
        /// Kept until the leader has settled.
        case deferred
        /// Served from the journal.
        case serve(ReplayPlan)
    }

    /// A REPLAY-REQUEST from `peer`, with `committed` the newest committed seq.
    mutating func plan(_ request: Message, from peer: [UInt8], committed: UInt64, settling: Bool) -> Verdict {
        precondition(request.kind == .replayRequest, "the planner plans replay requests")
        if request.header.seq < firstSeq {
            return .gone(
                Message(header: Header(kind: .replayEnd, flags: .historyTruncated, seq: committed, ref: firstSeq, history: history.rawValue)))
        }
        if settling {
            // A store after a failover would otherwise wait out its replay timeout before it asks again.
            deferred.removeAll { $0.peer == peer }
            if deferred.count < ReplayPlanner.deferredLimit { deferred.append((request, peer)) }
            assert(deferred.count <= ReplayPlanner.deferredLimit, "the deferred requests stay within their bound")
            return .deferred
        }
        let upTo = request.header.ref == 0 ? committed : min(request.header.ref, committed)
        let plan = ReplayPlan(
            peer: peer, from: max(request.header.seq, 1), through: upTo, head: committed, batchSize: batchSize, maxBatches: batchesPerRequest,
            history: history)
        // Nothing past what is committed, whatever the request asks for.
        assert(plan.through <= committed && plan.head == committed, "a replay serves only what is committed")
        return .serve(plan)
    }

    /// The requests kept while the leader settled, once it has: to plan again, in the order they came.
    mutating func takeDeferred() -> [(request: Message, peer: [UInt8])] {
        defer { deferred.removeAll() }
        return deferred
    }
}

import Logging

extension JournalRetention {
    /// Retention as a dispatcher runs it on its own journal after each of its checkpoints, as the
    /// leader or as the standby: the same needs for both, gathered here. Every member keeps the records
    /// after the older of its two checkpoints (a start that finds the newest damaged reads on from it)
    /// and what the cluster's stores need to catch up (`stores`, each snapshot's version + 1; nil when
    /// the snapshots cannot be read here, and then nothing goes): a standby may lead at any moment,
    /// and must then serve the stores as its leader would. `others` are the needs of the role (the
    /// leader's standby). Returns what it did or held back, for the status.
    package static func run(
        on log: any CheckpointedLog, budget: Int, stores: [Need]?, others: [Need] = [], logger: Logger
    ) throws -> String {
        precondition(budget > 0, "a retention budget is positive")
        let kept = log.checkpoints().map(\.seq)
        var needs = [
            kept.count >= 2
                ? Need(from: (kept.min() ?? 0) + 1, who: "the older checkpoint (seq \(kept.min() ?? 0))")
                : Need(from: log.firstSeq, who: "a second checkpoint, not yet written")
        ]
        needs += others
        needs += stores ?? [Need(from: log.firstSeq, who: "the stores, whose snapshots cannot be read here")]
        let plan = plan(segments: log.segmentSpans(), maxBytes: budget, needs: needs)
        if plan.remove > 0 {
            let first = log.firstSeq
            try log.removeOldestSegments(plan.remove)
            logger.notice(
                "retention let the journal's oldest segments go",
                metadata: ["segments": "\(plan.remove)", "bytes": "\(plan.freedBytes)", "seqs": "\(first)…\(log.firstSeq - 1)"])
        }
        assert(needs.allSatisfy { $0.from >= log.firstSeq || plan.remove == 0 }, "nothing a reader needs went")
        return plan.keptFor.map { "\(heldBack) kept from seq \(log.firstSeq) for \($0.who)" } ?? "within retain_mb"
    }

    /// How ``run(on:budget:stores:others:logger:)``'s answer begins when a reader held segments back.
    package static let heldBack = "over retain_mb,"
}

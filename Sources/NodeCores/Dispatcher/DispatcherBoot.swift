import FluxCore
import Logging

/// How a dispatcher starts from what its log holds: decided here once, for the shell
/// (`DispatcherLoop`, whose `Journal` opens on a real disk) and for the simulator (whose journal is on
/// a simulated one), so that both start the same way.
///
/// A start continues the log: the next seq follows the log's newest, the history is the log's
/// cluster with an epoch later than any before it, and retries of dispatches acknowledged before the
/// restart are recognised from the log's newest records.
public enum DispatcherBoot {
    /// The history an opening of a log serves: the cluster id recorded with the log (`newCluster()`
    /// when none is recorded yet: a new log) and an epoch later than `previousEpoch`, the one recorded
    /// by the opening before, even if the wall clock went back (``HistoryID/opening(cluster:previousEpoch:wallNanoseconds:)``).
    /// The caller records the result before anything of the new epoch goes out.
    public static func history(cluster: UInt32, previousEpoch: UInt64, wallNanoseconds: Int64, newCluster: () -> UInt32) -> HistoryID {
        HistoryID.opening(cluster: cluster == 0 ? newCluster() : cluster, previousEpoch: previousEpoch, wallNanoseconds: wallNanoseconds)
    }

    /// The seq the dedup table is rebuilt from: the newest ``DispatcherCore/dedupRecoveryRecords`` of
    /// the log, and none it no longer holds.
    public static func rememberedFrom(_ log: any ActionLog) -> UInt64 {
        let window = DispatcherCore.dedupRecoveryRecords
        return max(log.firstSeq, log.lastSeq > window ? log.lastSeq - window + 1 : 1)
    }

    /// The core that continues `log`. Its head is the log's newest seq, durable already (a journal is
    /// forced to disk when it opens); its first seq, history and client scope are the log's; and its
    /// dedup table holds the log's newest dispatches (``rememberedFrom(_:)``); its schedules are those
    /// the whole log leaves pending.
    ///
    /// The schedules come from the newest valid checkpoint the log keeps (``DispatcherCheckpoint``) and
    /// the records after it; without one, from the whole log. A checkpoint that cannot be used is
    /// passed over for the one before, with a warning that says why.
    public static func core(rules: DispatcherRules, log: any ActionLog, now: NodeTime, logger: Logger) throws -> DispatcherCore {
        try core(rules: rules, log: log, now: now, logger: logger, crossCheck: nil)
    }

    /// `crossCheck` (the simulator's, and the tests') also reads the whole log and is told how the book
    /// a checkpoint gave differs from the one the records give, if it does.
    package static func core(
        rules: DispatcherRules, log: any ActionLog, now: NodeTime, logger: Logger, crossCheck: ((String) -> Void)?
    ) throws -> DispatcherCore {
        let core = DispatcherCore(
            rules: rules, head: log.lastSeq, firstSeq: log.firstSeq, history: log.history, now: now, logger: logger,
            clientScope: log.clientScope)
        try log.forEachDispatch(from: rememberedFrom(log)) { client, clientSeq, seq in
            core.remember(client: client, clientSeq: clientSeq, seq: seq)
        }
        let checkpoint = (log as? any CheckpointedLog).flatMap { newestCheckpoint(of: $0, logger: logger) }
        if let checkpoint {
            logger.notice(
                "schedules read from the checkpoint and the journal after it",
                metadata: ["checkpoint_seq": "\(checkpoint.seq)", "pending": "\(checkpoint.schedules.count)", "head": "\(log.lastSeq)"])
        } else if log.lastSeq > 0 {
            logger.info(
                "no checkpoint to start from: schedules read from the whole journal",
                metadata: ["first_seq": "\(log.firstSeq)", "head": "\(log.lastSeq)"])
        }
        try core.restoreSchedules(
            from: log, checkpoint: checkpoint.map { ($0.book(maxPendingBytes: rules.maxPendingScheduleBytes), $0.seq + 1) })
        if let crossCheck, let checkpoint, log.firstSeq == 1 {
            var whole = ScheduleBook(maxPendingBytes: rules.maxPendingScheduleBytes)
            try log.forEachScheduling(from: 1) { whole.note($0.topic, header: $0.header, payload: $0.payload) }
            let restored = DispatcherCheckpoint(seq: 0, anchor: checkpoint.anchor, book: core.schedules)
            let scanned = DispatcherCheckpoint(seq: 0, anchor: checkpoint.anchor, book: whole)
            if restored != scanned {
                crossCheck(
                    "the book from the checkpoint at seq \(checkpoint.seq) (\(restored.schedules.count) pending, \(restored.fired) fired) differs from the whole log's (\(scanned.schedules.count) pending, \(scanned.fired) fired)"
                )
            }
        }
        return core
    }

    /// The schedule book a dispatcher opening `log` would hold, as it reads it (the newest usable
    /// checkpoint and the records after it, or the whole log), and the checkpoint it started from: what
    /// `zflux schedules` shows of a stopped cluster and what `zflux journal compact` must keep.
    package static func schedules(of log: any ActionLog, logger: Logger) throws -> (book: ScheduleBook, checkpoint: DispatcherCheckpoint?) {
        let checkpoint = (log as? any CheckpointedLog).flatMap { newestCheckpoint(of: $0, logger: logger) }
        var book = checkpoint?.book(maxPendingBytes: ScheduleBook.defaultMaxPendingBytes) ?? ScheduleBook()
        try log.forEachScheduling(from: checkpoint.map { $0.seq + 1 } ?? log.firstSeq) { book.note($0.topic, header: $0.header, payload: $0.payload) }
        return (book, checkpoint)
    }

    /// The newest checkpoint `log` keeps that it can start from: whole, of a seq the log holds (or the
    /// one just before its first), whose record there is the one it names.
    package static func newestCheckpoint(of log: any CheckpointedLog, logger: Logger) -> DispatcherCheckpoint? {
        for stored in log.checkpoints() {
            let problem: String
            switch DispatcherCheckpoint.decode(stored.bytes) {
            case .failure(let error): problem = error.description
            case .success(let checkpoint) where checkpoint.seq != stored.seq:
                problem = "it says seq \(checkpoint.seq), and its name \(stored.seq)"
            case .success(let checkpoint) where checkpoint.seq > log.lastSeq:
                problem = "it covers seq \(checkpoint.seq), past the log's newest, \(log.lastSeq) (a tail lost since)"
            case .success(let checkpoint) where checkpoint.seq + 1 < log.firstSeq:
                problem = "the log no longer holds the records after it (it starts at seq \(log.firstSeq))"
            case .success(let checkpoint):
                guard checkpoint.seq >= log.firstSeq else { return checkpoint }
                let record = (try? log.read(from: checkpoint.seq, limit: 1))?.first
                guard let record, record.header.seq == checkpoint.seq, DispatcherCheckpoint.Anchor(record.header) == checkpoint.anchor else {
                    problem = "the log's record at seq \(checkpoint.seq) is not the one it covers (sequenced again since)"
                    break
                }
                return checkpoint
            }
            logger.warning(
                "a checkpoint is passed over; the one before it is tried, or the whole log read",
                metadata: ["checkpoint": "\(stored.name)", "reason": "\(problem)"])
        }
        return nil
    }
}

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
    public static func core(rules: DispatcherRules, log: any ActionLog, now: NodeTime, logger: Logger) throws -> DispatcherCore {
        let core = DispatcherCore(
            rules: rules, head: log.lastSeq, firstSeq: log.firstSeq, history: log.history, now: now, logger: logger,
            clientScope: log.clientScope)
        try log.forEachDispatch(from: rememberedFrom(log)) { client, clientSeq, seq in
            core.remember(client: client, clientSeq: clientSeq, seq: seq)
        }
        try core.rebuildSchedules(from: log)
        return core
    }
}

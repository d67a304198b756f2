/// A rule of the cores that the simulator's canaries break on purpose (`zflux simulate --canary`).
public enum Canary: String, CaseIterable, Sendable {
    /// The dispatcher acknowledges before the journal says the action is durable.
    case durableBeforeAck = "ack-before-durable"
    /// The dispatcher forgets which (client id, client seq) it has sequenced: a retry is a new action.
    case dedup = "no-dedup"
    /// A store that sees a gap applies what it has and skips the missing actions.
    case gapRepair = "no-gap-repair"
    /// A store runs effects for actions it recovers by replay too.
    case effectsOnlyLive = "effects-on-replay"
    /// The dispatcher trusts a journal tail it found in the page cache without forcing it to disk.
    case syncJournalOnOpen = "no-sync-on-open"
    /// The dispatcher's loop tells its core a burst is durable before the journal's sync returns: two
    /// steps of the interpreter the real loop and the simulator share, the wrong way round.
    case releaseBeforeSync = "release-before-sync"
    /// A leader with a `sync` standby acknowledges once its own journal holds an action.
    case ackBeforeReplicated = "ack-before-replicated"
    /// A standby takes records from a leader of an older epoch than one it has seen (or its own).
    case standbyAcceptsOldEpoch = "standby-accepts-old-epoch"
    /// A leader whose lease ran out goes on acknowledging on its own journal alone.
    case oldLeaderAcksAfterLease = "old-leader-acks-after-lease"
    /// A dispatcher that opens its log reads the schedules made and cancelled there, not those fired:
    /// after a restart or a failover it fires them again.
    case scheduleFiresTwice = "schedule-fires-twice"
    /// A sync that failed (EIO) is tried again, and the actions it covered acknowledged once the retry
    /// returns: the pages the failure dropped are not on the disk.
    case trustsFailedFsync = "trusts-failed-fsync"
    /// Opening the journal takes a record that fails its CRC with intact records after it for a torn
    /// tail, and trims it and everything after it.
    case skipsCorruptRecord = "skips-corrupt-record"
    /// A standby drops whatever records its leader asks it to, those a single dispatcher journaled
    /// (and acknowledged) and those a leader said it committed included: refuse-to-drop removed.
    case dropsAcknowledged = "drops-acknowledged"
}

extension Canary {
    /// What breaking it means, in a line.
    public var summary: String {
        switch self {
        case .durableBeforeAck: "the dispatcher ACKs before the journal is durable"
        case .dedup: "the dispatcher does not deduplicate retries"
        case .gapRepair: "stores skip over gaps instead of repairing them"
        case .effectsOnlyLive: "stores run effects again for replayed actions"
        case .syncJournalOnOpen: "the dispatcher trusts an unsynced journal tail after a crash"
        case .ackBeforeReplicated: "the leader ACKs before its standby holds the action durable"
        case .standbyAcceptsOldEpoch: "the standby accepts records from a leader of an older epoch"
        case .oldLeaderAcksAfterLease: "a leader whose lease ran out goes on ACKing alone"
        case .releaseBeforeSync: "the dispatcher's loop releases ACKs before its journal's sync returns"
        case .scheduleFiresTwice: "a new leader forgets which schedules fired, and fires them again"
        case .trustsFailedFsync: "the dispatcher retries a failed fsync and acknowledges what it covered"
        case .skipsCorruptRecord: "recovery trims a corrupt record with intact records after it as a torn tail"
        case .dropsAcknowledged: "a standby drops acknowledged records when its leader lacks them"
        }
    }
}

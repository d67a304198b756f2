@_spi(Simulation) import FluxCore

/// What a ``DispatcherCore`` asks its shell to do (its ``Command``s, carried out in order by
/// ``DispatcherInterpreter``), and the limits the core and its shell share.
extension DispatcherCore {
    /// Which ROUTER a reply goes out on.
    public enum Route: Sendable { case intake, replay, replication }

    package enum Command {
        /// Reply to one peer of a ROUTER.
        case reply(Route, peer: [UInt8], Message)
        /// Reply to one peer of a ROUTER with ``status(now:)`` and what the shell knows.
        case replyStatus(Route, peer: [UInt8])
        /// Publish on the actions PUB.
        case publish(Message)
        /// Append these stamped actions (their records' bytes, written as they are) to the journal and
        /// make them durable under its fsync policy; then report ``durable(through:)``.
        case append(StampedRecords)
        /// Answer a replay request from the journal: queued in the shell's ``ReplayScheduler``, which
        /// serves it a slice per turn.
        case serveReplay(ReplayPlan)
        /// Send the standby the journal's records `from...through` as REPLICA-APPENDs (``replicaAppend(first:records:)``
        /// builds each), read from the journal: the standby is catching up.
        case replicateFromLog(peer: [UInt8], from: UInt64, through: UInt64)
        /// This dispatcher leads no more (``steppedDown``): nothing more is acknowledged or published.
        /// The shell stops serving as the leader (docs/OPERATIONS.md, "High availability").
        case stepDown(reason: String)
        /// A peer on the replication port claims a newer epoch than this leader's. A peer's word deposes
        /// no one (a forged hello did, 40 times in 20 s): the shell asks etcd whether this member still
        /// holds the leader's key under its lease, and calls ``leaseExpired(_:)`` only if it does not.
        case verifyLeadership(claim: String)
        /// A store of app `asker` asks to quarantine the action at `seq`, which crashed its reducer again
        /// and again: the shell checks the journal's record is of one of `apps` (the asker's own, or one
        /// it reads, from this dispatcher's catalog), keeps the entry durable, and calls ``quarantined(_:)``.
        case quarantine(seq: UInt64, asker: String, apps: Set<String>, reason: String)
        /// `zflux quarantine release`: the shell reads the quarantined action at `seq` from the journal
        /// and offers it again as a new dispatch (``releaseQuarantined(_:header:from:now:)``), whose ACK or
        /// NACK goes to `peer`.
        case releaseQuarantined(seq: UInt64, peer: [UInt8], header: Header)
    }

    /// The most payload one REPLICA-APPEND carries (one larger record goes alone). With the shell's
    /// queue of ``replicaQueueMessages`` per peer, it bounds what a peer that does not read holds in
    /// the leader's memory.
    public static let replicaAppendBytes = 512 << 10

    /// How many REPLICA-APPENDs may wait in one peer's queue; past that, the send fails and the feed
    /// goes back to the log (``standbyMissed(peer:from:)``).
    public static let replicaQueueMessages: Int32 = 8

    /// How many of the newest journaled actions to feed to ``remember(_:)`` at start.
    public static let dedupRecoveryRecords: UInt64 = 65_536

    /// At most this many: a store asks only after crashing twice on one seq, so more means the app is broken.
    public static var maxQuarantined: Int { QuarantineBook.maxEntries }

    /// The most schedules fired in one turn: a start after a long stop finds many due at once, and
    /// the rest follow in the next turns, in order.
    public static let maxFiredPerTurn = 4096

    /// The NACK for a (client id, client seq) the dedup table let go (``DedupTable/Lookup/forgotten``).
    package static let dedupWindowPassed =
        "dedup window passed: the dispatcher no longer remembers this (client id, client seq); this dispatch may already be sequenced, so it is not sequenced again"

    /// The NACK for a QUARANTINE-RELEASE without the nodes' credential.
    package static var releaseNeedsCredential: String { QuarantineBook.releaseNeedsCredential }

    /// What a release's client id is scoped by (``ClientScope``), whatever key sent it.
    static var releasePrincipal: [UInt8] { QuarantineBook.releasePrincipal }

    /// The REPLICA-APPEND of `records` (consecutive, from `first`; none: a heartbeat), stamped with
    /// this history and what is committed.
    public func replicaAppend(first: UInt64, records: [Message]) -> Message {
        standbyFeed.append(first: first, batchPayload: records.isEmpty ? [] : ReplayBatch.encode(records), committed: durableHead)
    }

    /// A REPLICA-APPEND of a payload already encoded (records read from the journal as a batch).
    public func replicaAppend(first: UInt64, batchPayload: [UInt8]) -> Message {
        standbyFeed.append(first: first, batchPayload: batchPayload, committed: durableHead)
    }

    /// The NACK of the dispatch `header` (its client id and seq as the client sent them), saying why.
    static func nackMessage(_ header: Header, _ reason: String, flags: Header.Flags = []) -> Message {
        Message(header: Header(kind: .nack, flags: flags, clientID: header.clientID, clientSeq: header.clientSeq), payload: Array(reason.utf8))
    }
}

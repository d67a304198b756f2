import FluxCore

/// What a leading dispatcher knows of its standby: who it is on the replication ROUTER, what has been
/// sent to it, and what it holds durable (issue 27, docs/PROTOCOL.md "Replication").
///
/// A standby says hello with its newest record; the leader welcomes it when that record is the
/// leader's own at that seq (log matching), and streams from there. Everything the standby holds
/// durable has been sent; nothing is sent past `durableThrough + window`.
public struct StandbyLink: Equatable, Sendable {
    /// The standby's routing id on the replication ROUTER (a new one after each of its reconnects).
    public var peer: [UInt8]
    /// The newest seq sent to it.
    public var sentThrough: UInt64
    /// The newest seq it said it holds durable.
    public var durableThrough: UInt64
    /// When it was last heard from (leader's monotonic milliseconds).
    public var lastHeardMs: UInt64
    /// The quarantine list it holds (``QuarantineList/digest(_:)``), as its last REPLICA-ACK said.
    package var quarantineHeld = QuarantineList.none
    /// What its retention last did to its own journal, as its last REPLICA-ACK said (nil: nothing said).
    package var retention: RetentionReport?
    /// The list last sent to it, and when: sent again while it holds another, at most every heartbeat.
    package var quarantineSent = QuarantineList.none
    package var quarantineSentMs: UInt64 = 0

    public init(peer: [UInt8], sentThrough: UInt64, durableThrough: UInt64, lastHeardMs: UInt64) {
        self.peer = peer
        self.sentThrough = sentThrough
        self.durableThrough = durableThrough
        self.lastHeardMs = lastHeardMs
    }

    /// How a hello from a standby whose newest record is `seq`, stamped `history`, is answered by a
    /// leader whose log holds seqs `firstSeq...head` and whose record at a seq carries the stamp
    /// `stampAt(seq)`.
    public enum Greeting: Equatable, Sendable {
        /// Its record at `seq` is ours: stream from `seq + 1`.
        case welcome(after: UInt64)
        /// Its record at `seq` is not ours (or we have none there): it drops the run that record ends.
        case mismatch(at: UInt64)
        /// It needs records older than our log holds: only a copy of the journal can start it.
        case tooFarBehind(first: UInt64)
    }

    /// Where a standby whose record at `seq` is stamped `history`, and not as ours, stops matching our
    /// log: the last seq up to `seq` (and our `head`) that carries that stamp here. By log matching
    /// (one leader per epoch, each appending in order to a prefix it shares), everything up to it is
    /// ours too. Nil when no record here carries that stamp: then none of that run is ours.
    /// Stamps only grow along a log, so the search is a bisection.
    public static func matchedThrough(seq: UInt64, history: UInt64, firstSeq: UInt64, head: UInt64, stampAt: (UInt64) -> UInt64?) -> UInt64? {
        let epoch = HistoryID(rawValue: history).epoch
        var low = max(firstSeq, 1), high = min(seq, head)
        guard low <= high else { return nil }
        // The last seq in low...high whose epoch is at most `epoch`.
        var found: UInt64? = nil
        while low <= high {
            let middle = low + (high - low) / 2
            // None there: sequenced, not yet in the log (the core's head runs ahead of it): above.
            if let stamp = stampAt(middle), HistoryID(rawValue: stamp).epoch <= epoch {
                found = middle
                low = middle + 1
            } else {
                if middle == 0 { break }
                high = middle - 1
            }
        }
        guard let found, stampAt(found) == history else { return nil }
        return found
    }

    /// The proof a member's REPLICA-HELLO carries in its client id field: SipHash-2-4 of the hello's
    /// seq, epoch seen and history, keyed by the pair's member token (a secret the members hold and
    /// clients do not: ``DispatcherRules/memberToken``). Never 0.
    public static func helloProof(token: UInt64, seq: UInt64, seen: UInt64, history: UInt64) -> UInt64 {
        var bytes = Array("zflux replica hello".utf8)
        for word in [seq, seen, history] { bytes.appendLittleEndian(word) }
        return SipHash.hash(bytes, k0: token, k1: ~token) | 1
    }

    public static func greet(seq: UInt64, history: UInt64, firstSeq: UInt64, head: UInt64, stampAt: (UInt64) -> UInt64?) -> Greeting {
        if seq == 0 { return firstSeq > 1 ? .tooFarBehind(first: firstSeq) : .welcome(after: 0) }
        if seq > head { return .mismatch(at: seq) }
        if seq < firstSeq { return firstSeq > seq + 1 ? .tooFarBehind(first: firstSeq) : .welcome(after: seq) }
        return stampAt(seq) == history ? .welcome(after: seq) : .mismatch(at: seq)
    }
}

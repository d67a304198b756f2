import FluxCore
import Logging

/// A standby dispatcher's rules as a deterministic state machine: it follows the leader's journal over
/// the replication stream, has the shell write and sync what it receives, and answers with what it
/// holds durable; it never sequences, publishes or acknowledges a client (issue 27).
///
/// The rules it keeps:
/// - it follows one leader's epoch at a time, the newest it has seen, and refuses anything from an
///   older one: a deposed leader cannot get its records held, so (under `sync`) cannot ACK them;
/// - it writes only records that continue its log exactly (a gap or an overlap makes it say hello
///   again, from what it holds);
/// - its log is a prefix of the leader's: where its newest record is not the leader's (it led once and
///   kept a tail nobody else holds), it drops that run of records before following;
/// - an ACK names a seq it holds durable, never more.
///
/// Events come in as method calls; decisions go out as ``Command``s, taken with ``takeCommands()``.
public final class StandbyCore: NodeCore {
    package enum Command: Equatable {
        /// Send to the leader (the replication DEALER).
        case send(Message)
        /// Append these records (the leader's entries, as they came) to the journal, make them durable,
        /// then call ``durable(through:)``.
        case append(StampedRecords)
        /// Drop the run of records (one history stamp) that ends at `seq`, and everything after it;
        /// then call ``truncated(lastSeq:lastStamp:)``.
        case dropRun(endingAt: UInt64)
        /// Drop every record after `seq` (the leader's log matches this one up to it); then call
        /// ``truncated(lastSeq:lastStamp:)``.
        case truncate(after: UInt64)
        /// Take the leader's cluster id and client-scope secret for the journal (before any record).
        case adopt(cluster: UInt32, clientScope: ClientScope)
        /// The leader has gone silent: drop the connection and connect again (the shell may also look
        /// up who leads now), then the core says hello.
        case reconnect
        /// Keep this quarantine list beside the journal, durably, in place of the one there; then call
        /// ``quarantineKept(digest:)``.
        case keepQuarantine([Quarantine], digest: UInt64)
    }

    public enum Phase: String, Sendable {
        /// Waiting for an answer to its hello.
        case greeting
        /// Dropping a run of records the leader does not hold.
        case truncating
        /// Receiving the stream.
        case following
    }

    public struct Rules: Sendable {
        /// A leader silent for this long (no append, not even an empty one) is taken for gone.
        public var leaderTimeoutMilliseconds: UInt64 = 1_000
        /// A hello unanswered for this long is sent again.
        public var helloRetryMilliseconds: UInt64 = 250
        /// The pair's member token (``DispatcherRules/memberToken``): each hello carries its proof
        /// (``StandbyLink/helloProof(token:seq:seen:history:)``). Nil: none.
        public var memberToken: UInt64? = nil
        /// How the pair replicates: under `sync` a leader acknowledges only what this standby holds, so
        /// nothing at or below what a leader said it committed may be dropped.
        public var replication = DispatcherRules.Replication(rawValue: Defaults.replication) ?? .sync
        public init() {}
    }

    public let rules: Rules
    let logger: Logger
    /// Rules broken on purpose, for the simulator's canaries only.
    @_spi(Simulation) public var brokenRules: Set<Canary> = [] {
        didSet {
            // Set right after `init`, whose hello is still queued: it is said again under the rules as broken now.
            guard phase == .greeting, commands.contains(where: { if case .send(let message) = $0 { message.kind == .replicaHello } else { false } })
            else { return }
            commands.removeAll { if case .send(let message) = $0 { message.kind == .replicaHello } else { false } }
            hello(now: NodeTime(milliseconds: helloSentMs, wallNanoseconds: 0))
        }
    }
    private var commands: [Command] = []
    public private(set) var phase: Phase = .greeting
    /// The newest record written (durable or not yet), and its history stamp.
    public private(set) var lastSeq: UInt64
    public private(set) var lastStamp: UInt64
    /// The newest record the journal holds durable.
    public private(set) var durableSeq: UInt64
    /// The epoch followed: the leader's history, once welcomed.
    public private(set) var leader: HistoryID?
    /// The newest epoch seen: its own journal's openings, its records' stamps and every leader's.
    public private(set) var newestEpoch: UInt64
    /// What the leader said it has committed (published and acknowledged), as last heard.
    public private(set) var leaderCommitted: UInt64 = 0 {
        didSet { committedHeard = max(committedHeard, leaderCommitted) }
    }
    /// The newest seq any leader has said it committed, as this member heard it: the shell hands it
    /// from one core of the member to the next (a core per time it follows).
    public private(set) var committedHeard: UInt64
    /// The head the followed leader began its epoch at (its REPLICA-WELCOME says): a standby holding
    /// less may lack acknowledged actions of earlier epochs, whatever the leader has committed yet.
    public private(set) var leaderBegan: UInt64 = 0
    private var lastHeardMs: UInt64
    private var helloSentMs: UInt64 = 0
    /// When the connection to the leader was last made anew.
    private var connectedMs: UInt64 = 0
    private var adopted: (cluster: UInt32, scope: ClientScope)?
    /// The leader's quarantine list this standby keeps (``QuarantineList/digest(_:)``): none until the
    /// leader has sent one, so the first ACK to a leader asks for its list.
    public private(set) var quarantineHeld = QuarantineList.none
    /// What retention last did to the journal (``RetentionReport``), carried in each ACK: empty until it ran.
    private var retentionReport: [UInt8] = []

    /// `lastSeq` is the newest record the journal holds (durable: a journal is synced when it opens),
    /// stamped `lastStamp`; `newestEpoch` the newest epoch its journal has recorded.
    public init(
        rules: Rules = Rules(), lastSeq: UInt64, lastStamp: UInt64, newestEpoch: UInt64, committedHeard: UInt64 = 0, now: NodeTime, logger: Logger
    ) {
        self.rules = rules
        self.committedHeard = committedHeard
        self.logger = logger
        self.lastSeq = lastSeq
        self.lastStamp = lastStamp
        self.durableSeq = lastSeq
        self.newestEpoch = max(newestEpoch, HistoryID(rawValue: lastStamp).epoch)
        self.lastHeardMs = now.milliseconds
        self.connectedMs = now.milliseconds
        hello(now: now)
    }

    package func takeCommands() -> [Command] {
        checkInvariants()
        defer { commands.removeAll(keepingCapacity: true) }
        return commands
    }

    /// Where a broken invariant is reported instead of stopping the process (``invariant(_:_:report:)``):
    /// set by the simulator alone.
    @_spi(Simulation) public var onBrokenInvariant: ((String) -> Void)?

    /// What holds between any two events, checked each time the shell takes the commands.
    private func checkInvariants() {
        invariant(durableSeq <= lastSeq, "durable \(durableSeq) past what the journal was given (\(lastSeq))", report: onBrokenInvariant)
        // The journal holds no record of an epoch newer than the newest this standby has seen.
        let epoch = HistoryID(rawValue: lastStamp).epoch
        invariant(epoch <= newestEpoch, "a record of epoch \(epoch) past \(newestEpoch)", report: onBrokenInvariant)
        invariant(phase != .following || leader != nil, "a standby follows a leader it was welcomed by", report: onBrokenInvariant)
    }

    /// The latest the shell may wait before calling ``tick(now:)`` again.
    public func nextDeadlineMs(now: NodeTime) -> UInt64 {
        switch phase {
        case .greeting: helloSentMs + rules.helloRetryMilliseconds
        case .truncating: now.milliseconds + rules.helloRetryMilliseconds
        case .following: lastHeardMs + rules.leaderTimeoutMilliseconds
        }
    }

    private func hello(now: NodeTime) {
        phase = .greeting
        helloSentMs = now.milliseconds
        // The newest epoch seen is the standby's half of fencing, as its refusals are: the canary drops both.
        let seen = brokenRules.contains(.standbyAcceptsOldEpoch) ? 0 : newestEpoch
        let proof = rules.memberToken.map { StandbyLink.helloProof(token: $0, seq: lastSeq, seen: seen, history: lastStamp) } ?? 0
        commands.append(.send(Message(header: Header(kind: .replicaHello, seq: lastSeq, ref: seen, clientID: proof, history: lastStamp))))
    }

    /// A turn of the loop: a hello unanswered is sent again; a leader silent too long is left.
    public func tick(now: NodeTime) {
        switch phase {
        case .greeting where now.milliseconds >= helloSentMs + rules.helloRetryMilliseconds:
            // Said again on the same connection; a new one only once a leader timeout has passed, so a
            // handshake slower than the retry (a far link, CURVE) is not torn down before it ends.
            if now.milliseconds >= connectedMs + rules.leaderTimeoutMilliseconds {
                commands.append(.reconnect)
                connectedMs = now.milliseconds
            }
            hello(now: now)
        case .following where now.milliseconds >= lastHeardMs + rules.leaderTimeoutMilliseconds:
            logger.warning("the leader is silent; connecting again", metadata: ["leader": "\(leader.map { "\($0)" } ?? "none")"])
            commands.append(.reconnect)
            connectedMs = now.milliseconds
            hello(now: now)
        default:
            return
        }
    }

    /// Whether a message stamped `raw` comes from an epoch older than one seen: refused (fencing).
    private func refusesOld(_ raw: UInt64) -> Bool {
        let epoch = HistoryID(rawValue: raw).epoch
        guard epoch < newestEpoch, !brokenRules.contains(.standbyAcceptsOldEpoch) else { return false }
        commands.append(
            .send(
                Message(
                    header: Header(
                        kind: .replicaRefuse, ref: newestEpoch,
                        history: HistoryID(cluster: HistoryID(rawValue: raw).cluster, epoch: newestEpoch).rawValue))))
        return true
    }

    /// A message from the leader.
    public func received(_ message: Message, now: NodeTime) {
        let stamp = message.header.history
        switch message.kind {
        case .replicaWelcome:
            guard phase == .greeting, !refusesOld(stamp) else { return }
            guard message.header.seq == lastSeq, message.payload.count == ClientScope.encodedSize + 8,
                let scope = ClientScope(decoding: message.payload)
            else {
                hello(now: now)  // an answer to an older hello
                return
            }
            let offered = HistoryID(rawValue: stamp)
            if adopted == nil || adopted?.cluster != offered.cluster || adopted?.scope != scope {
                commands.append(.adopt(cluster: offered.cluster, clientScope: scope))
                adopted = (offered.cluster, scope)
            }
            leader = offered
            newestEpoch = max(newestEpoch, offered.epoch)
            leaderCommitted = message.header.ref
            leaderBegan = message.payload.readLittleEndian(UInt64.self, at: ClientScope.encodedSize)
            lastHeardMs = now.milliseconds
            phase = .following
            // Fencing: a welcome of an older epoch than one seen was refused above.
            assert(brokenRules.contains(.standbyAcceptsOldEpoch) || offered.epoch == newestEpoch, "the leader followed is of the newest epoch seen")
            logger.info("following the leader", metadata: ["history": "\(offered)", "from": "\(lastSeq + 1)"])
            // What it holds durable already: the leader counts nothing of it until told.
            ack(offered)
        case .replicaMismatch:
            guard phase == .greeting, !refusesOld(stamp), message.header.seq == lastSeq, lastSeq > 0 else { return }
            logger.warning("dropping records the leader does not hold", metadata: ["ending": "\(lastSeq)"])
            phase = .truncating
            // The leader says how far the run is its own (+1): only the rest goes. A whole run dropped
            // would take committed records with it, leaving them on one disk until they come back.
            if message.header.ref > 0 && message.header.ref - 1 < lastSeq {
                commands.append(.truncate(after: message.header.ref - 1))
            } else {
                commands.append(.dropRun(endingAt: lastSeq))
            }
        case .replicaAppend:
            if refusesOld(stamp) { return }
            guard phase == .following, stamp == leader?.rawValue else {
                // A newer leader than the one followed (or none yet): say hello to it.
                if phase == .following, HistoryID(rawValue: stamp).epoch > newestEpoch { hello(now: now) }
                return
            }
            lastHeardMs = now.milliseconds
            leaderCommitted = max(leaderCommitted, message.header.ref)
            guard !message.payload.isEmpty else {
                // A heartbeat says what comes next: past what it holds, records were lost on the way.
                if message.header.seq > lastSeq + 1 {
                    logger.warning(
                        "records lost on the way; asking again", metadata: ["expected": "\(lastSeq + 1)", "next": "\(message.header.seq)"])
                    hello(now: now)
                } else if message.header.ref < durableSeq, let leader {
                    // The leader has committed less than this holds: an ACK may have been lost. Say it again.
                    ack(leader)
                }
                return
            }
            // Read in place: the entries are written as they came, never decoded into messages.
            guard let entries = try? ReplayBatch.entries(message.payload, holding: .action), let first = entries.first else {
                logger.error("an undecodable append from the leader; asking again")
                hello(now: now)
                return
            }
            let fresh = entries.drop { $0.header.seq <= lastSeq }
            guard let next = fresh.first else { return }  // a repeat of what it holds
            guard next.header.seq == lastSeq + 1, first.header.seq == message.header.seq else {
                logger.warning("a gap in the stream; asking again", metadata: ["expected": "\(lastSeq + 1)", "got": "\(next.header.seq)"])
                hello(now: now)
                return
            }
            // The whole batch is checked before any of it is written: consecutive seqs, and no record
            // from an epoch newer than the leader's own or older than the one before it. A batch that skipped a seq used to reach the journal's own check and
            // stop the standby (exit 132).
            if let problem = Self.problem(in: fresh.map(\.header), after: lastSeq, stamp: lastStamp, leader: leader) {
                logger.error("a malformed append from the leader; nothing of it written, asking again", metadata: ["problem": "\(problem)"])
                hello(now: now)
                return
            }
            // What is written continues the log exactly, from the leader followed.
            precondition(phase == .following && next.header.seq == lastSeq + 1, "records are appended in order, to a log they continue")
            var records = StampedRecords()
            for entry in fresh { records.append(entry: entry, of: message.payload) }
            commands.append(.append(records))
            if let last = fresh.last {
                lastSeq = last.header.seq
                lastStamp = last.header.history
            }
        case .replicaQuarantine:
            if refusesOld(stamp) { return }
            guard phase == .following, stamp == leader?.rawValue, let leader else { return }
            lastHeardMs = now.milliseconds
            let digest = message.header.ref
            if digest == quarantineHeld {
                ack(leader)  // its ACK was lost: say again which list this holds
                return
            }
            guard digest == QuarantineList.digest(message.payload), let entries = QuarantineList.decode(message.payload) else {
                logger.error("a quarantine list from the leader that does not decode; keeping the one held")
                return
            }
            commands.append(.keepQuarantine(entries, digest: digest))
        default:
            return
        }
    }

    /// What is wrong with `records` as the records after `seq` (whose stamp is `stamp`) from `leader`,
    /// or nil when they may be written as they are.
    static func problem(in records: [Header], after seq: UInt64, stamp: UInt64, leader: HistoryID?) -> String? {
        guard let leader else { return "no leader followed" }
        var expected = seq + 1
        var previous = HistoryID(rawValue: stamp).epoch
        for record in records {
            let history = HistoryID(rawValue: record.history)
            guard record.seq == expected else { return "seq \(record.seq) where \(expected) was due" }
            guard history.epoch <= leader.epoch && history.epoch >= previous else {
                return "seq \(expected) has epoch \(history.epoch), outside \(previous)...\(leader.epoch)"
            }
            previous = history.epoch
            expected += 1
        }
        return nil
    }

    /// The journal holds everything through `seq` durable: tell the leader.
    public func durable(through seq: UInt64) {
        precondition(seq <= lastSeq, "the journal cannot hold what it was never given")
        durableSeq = max(durableSeq, seq)
        guard phase == .following, let leader else { return }
        ack(leader)
    }

    /// REPLICA-ACK: what the journal holds durable, and (in `ref`) which quarantine list it keeps.
    private func ack(_ leader: HistoryID) {
        // An ACK names a seq it holds durable, never more.
        precondition(durableSeq <= lastSeq, "an ACK of \(durableSeq) past what the journal was given (\(lastSeq))")
        commands.append(
            .send(
                Message(header: Header(kind: .replicaAck, seq: durableSeq, ref: quarantineHeld, history: leader.rawValue), payload: retentionReport)))
    }

    /// Retention ran on the journal: the next ACKs say what it did.
    package func retained(_ report: RetentionReport) { retentionReport = report.encoded }

    /// The shell keeps the list named `digest` beside the journal now: tell the leader.
    public func quarantineKept(digest: UInt64) {
        quarantineHeld = digest
        guard phase == .following, let leader else { return }
        ack(leader)
    }

    /// Why the journal's records after `seq` may not be dropped, or nil when they may: the member stops
    /// rather than lose what was acknowledged. `stampAfter` is the history stamp of the record at
    /// `seq + 1` (nil: none there).
    /// - A record a single dispatcher journaled (a journal the pair started from) may have been
    ///   acknowledged: a single dispatcher acknowledges all it journals.
    /// - Under `sync`, a seq some leader said it committed was acknowledged: a leader asking to drop it
    ///   lacks acknowledged actions.
    public func refusalToDrop(after seq: UInt64, stampAfter: UInt64?) -> String? {
        guard !brokenRules.contains(.dropsAcknowledged) else { return nil }
        if seq < lastSeq, let stamp = stampAfter, !HistoryID(rawValue: stamp).isLeadership {
            return "the leader asks this standby to drop records \(seq + 1)…\(lastSeq), which a single dispatcher journaled "
                + "(history \(HistoryID(rawValue: stamp))) and may have acknowledged. Stopping without dropping anything; "
                + "stop that leader and let this dispatcher lead first (docs/OPERATIONS.md, High availability)"
        }
        guard rules.replication == .sync, seq < committedHeard else { return nil }
        return "the leader asks this standby to drop records after seq \(seq), but seq \(committedHeard) was committed: "
            + "the leader lacks acknowledged actions this journal holds. Stopping without dropping anything; "
            + "stop that leader and let this dispatcher lead (docs/OPERATIONS.md, High availability)"
    }

    /// A standby that refuses to drop what was acknowledged (``refusalToDrop(after:stampAfter:)``): the
    /// member stops, saying why.
    package struct RefusedToDrop: Error, CustomStringConvertible {
        package let description: String
    }

    /// The journal dropped a run: it now ends at `lastSeq`, stamped `lastStamp`. Say hello from there.
    public func truncated(lastSeq: UInt64, lastStamp: UInt64, now: NodeTime) {
        precondition(lastSeq <= self.lastSeq, "a cut only drops records: the journal ends at \(lastSeq), past \(self.lastSeq)")
        self.lastSeq = lastSeq
        self.lastStamp = lastStamp
        durableSeq = min(durableSeq, lastSeq)
        hello(now: now)
    }
}

import FluxCore

/// A leader's feed of its standby (issue 27, docs/PROTOCOL.md "Replication"): one of the
/// ``DispatcherCore``'s machines. It answers the standby's hello, follows its ACKs, and says what to
/// send it: live records as they are stamped, records from the log while it catches up, heartbeats,
/// and the quarantine list when it holds another.
///
/// What it keeps (``StandbyLink``): the standby holds durable only what was sent to it, and nothing
/// is sent past what it holds durable plus the window.
struct StandbyFeed {
    /// This leader's history, and the oldest seq its journal holds.
    let history: HistoryID
    var firstSeq: UInt64 {
        willSet { precondition(newValue >= firstSeq, "the journal's first seq only moves up") }
    }
    /// Records sent and not yet acknowledged, at most.
    let window: UInt64
    /// How often the quarantine list is offered again while the standby holds another.
    let heartbeatMilliseconds: UInt64
    /// The standby following this leader's journal, once it has said hello.
    private(set) var link: StandbyLink?

    init(history: HistoryID, firstSeq: UInt64, window: UInt64, heartbeatMilliseconds: UInt64) {
        precondition(window > 0, "a standby is sent something")
        (self.history, self.firstSeq, self.window, self.heartbeatMilliseconds) = (history, firstSeq, window, heartbeatMilliseconds)
    }

    /// What a REPLICA-HELLO is answered with.
    enum HelloVerdict: Equatable {
        /// Nothing: it lacks the member token's proof.
        case ignore
        /// It claims a newer epoch: the shell asks whether this member still leads.
        case verifyLeadership(claim: String)
        /// Its record at `after` is ours: it follows from `after + 1` (the link is set).
        case welcome(after: UInt64)
        /// Its record at `seq` is not ours: it keeps what matched (`keep`, +1; 0: none of that run).
        case mismatch(at: UInt64, keep: UInt64)
        /// It needs records the journal no longer holds, from `first` on.
        case tooFarBehind(first: UInt64)
    }

    /// A REPLICA-HELLO from `peer`. `stampAt(seq)` is the history stamp of the log's record at `seq`
    /// (nil: none there), for log matching; `head` the newest seq sequenced.
    mutating func hello(
        _ message: Message, from peer: [UInt8], memberToken: UInt64?, head: UInt64, now: UInt64, stampAt: (UInt64) -> UInt64?
    ) -> HelloVerdict {
        precondition(message.kind == .replicaHello, "a hello is a REPLICA-HELLO")
        // A peer that cannot prove it is a member gets nothing: no welcome, no secret, no record, and
        // its epoch claim is not even looked at.
        if let memberToken,
            message.header.clientID
                != StandbyLink.helloProof(token: memberToken, seq: message.header.seq, seen: message.header.ref, history: message.header.history)
        {
            return .ignore
        }
        if message.header.ref > history.epoch {
            return .verifyLeadership(claim: "a standby has seen epoch \(message.header.ref), newer than this one (\(history.epoch))")
        }
        switch StandbyLink.greet(seq: message.header.seq, history: message.header.history, firstSeq: firstSeq, head: head, stampAt: stampAt) {
        case .welcome(let after):
            precondition(after <= head, "a standby is welcomed after a record this leader holds")
            // Its hello names its newest record, not what it holds durable: its first ACK says that.
            link = StandbyLink(peer: peer, sentThrough: after, durableThrough: 0, lastHeardMs: now)
            return .welcome(after: after)
        case .mismatch(let at):
            // How far its log is ours: it keeps that much, so what was committed stays on two disks
            // while it catches up.
            let matched = StandbyLink.matchedThrough(seq: at, history: message.header.history, firstSeq: firstSeq, head: head, stampAt: stampAt)
            assert(matched.map { $0 <= min(at, head) } ?? true, "what matched is below the mismatch and this leader's head")
            return .mismatch(at: at, keep: matched.map { $0 + 1 } ?? 0)
        case .tooFarBehind(let first):
            assert(first > 1, "only a journal that lost its oldest records is too far ahead of a standby")
            return .tooFarBehind(first: first)
        }
    }

    /// The REPLICA-WELCOME of a standby whose record at `after` is ours: the client-scope secret, then
    /// the head this epoch began at (`began`): acknowledged actions of earlier epochs may be anywhere up
    /// to it, so a standby may lead only once it holds that much (under sync nothing of that tail counts
    /// as committed until the standby has it).
    func welcome(after: UInt64, scope: ClientScope, began: UInt64, committed: UInt64) -> Message {
        precondition(link?.sentThrough == after, "a standby is welcomed where its feed starts")
        var secret: [UInt8] = []
        scope.encode(into: &secret)
        secret.appendLittleEndian(began)
        return Message(header: Header(kind: .replicaWelcome, seq: after, ref: committed, history: history.rawValue), payload: secret)
    }

    /// The empty REPLICA-APPEND that tells the standby, even when idle, that the leader is alive, how far
    /// it has committed, and the first seq not sent yet; nil without a standby.
    func heartbeat(committed: UInt64) -> (peer: [UInt8], message: Message)? {
        guard let link else { return nil }
        return (link.peer, append(first: link.sentThrough + 1, batchPayload: [], committed: committed))
    }

    /// A REPLICA-ACK from `peer`: true when it is the standby's, of this history (the link moves on).
    mutating func acked(_ message: Message, from peer: [UInt8], now: UInt64) -> Bool {
        guard var link, link.peer == peer, message.header.history == history.rawValue else { return false }
        let before = link.durableThrough
        // It cannot hold durable what it was not sent.
        link.durableThrough = max(link.durableThrough, min(message.header.seq, link.sentThrough))
        link.lastHeardMs = now
        link.quarantineHeld = message.header.ref
        if let report = RetentionReport(payload: message.payload) { link.retention = report }
        assert(link.durableThrough >= before && link.durableThrough <= link.sentThrough, "what the standby holds only grows, within what it was sent")
        self.link = link
        return true
    }

    /// Stamped records `first...last` go to the journal: to a standby that has everything before them
    /// too, within the window, so its write and fsync overlap the journal's own.
    mutating func live(_ stamped: StampedRecords, committed: UInt64, maxBytes: Int, into commands: inout [DispatcherCore.Command]) {
        guard let link else { return }
        guard let first = stamped.firstSeq, let last = stamped.lastSeq else { preconditionFailure("a burst handed to the journal holds records") }
        guard link.sentThrough == first - 1, last <= link.durableThrough + window else { return }
        // In messages of at most `maxBytes` (a burst may reach 16 MiB, the most a peer takes).
        for part in stamped.parts(0..<stamped.count, maxBytes: maxBytes) {
            let message = append(first: stamped.records[part.lowerBound].seq, batchPayload: stamped.batchPayload(part), committed: committed)
            commands.append(.reply(.replication, peer: link.peer, message))
        }
        self.link?.sentThrough = last
    }

    /// What the standby lacks and may be sent now (within the window), read from the log.
    mutating func fromLog(head: UInt64, into commands: inout [DispatcherCore.Command]) {
        guard let link, link.sentThrough < head else { return }
        let through = min(head, link.durableThrough + window)
        guard through > link.sentThrough else { return }
        commands.append(.replicateFromLog(peer: link.peer, from: link.sentThrough + 1, through: through))
        self.link?.sentThrough = through
        assert(through - link.durableThrough <= window, "nothing is sent past the window")
    }

    /// A REPLICA-APPEND from `seq` did not reach `peer`'s queue: the feed goes back to `seq` (and
    /// resumes from the log on the next ACK or heartbeat), never below what it holds durable.
    mutating func missed(peer: [UInt8], from seq: UInt64) {
        guard var link, link.peer == peer, seq > 0 else { return }
        link.sentThrough = max(link.durableThrough, min(link.sentThrough, seq - 1))
        assert(link.sentThrough < seq || link.sentThrough == link.durableThrough, "the feed goes back to what was missed")
        self.link = link
    }

    /// The quarantine list (`bytes`, whose digest is `digest`) when the standby holds another: after its
    /// welcome, on a change, and again at most every heartbeat until its REPLICA-ACK names this list.
    mutating func offerQuarantine(_ bytes: [UInt8], digest: UInt64, now: UInt64, into commands: inout [DispatcherCore.Command]) {
        guard var link, link.quarantineHeld != digest, link.quarantineSent != digest || now >= link.quarantineSentMs + heartbeatMilliseconds
        else { return }
        link.quarantineSent = digest
        link.quarantineSentMs = now
        self.link = link
        commands.append(
            .reply(
                .replication, peer: link.peer,
                Message(header: Header(kind: .replicaQuarantine, ref: digest, history: history.rawValue), payload: bytes)))
    }

    /// What holds between any two events, with `head` the newest seq sequenced: the standby was sent
    /// only what was sequenced, and holds durable only what it was sent.
    func checkInvariants(head: UInt64, report: ((String) -> Void)?) {
        guard let link else { return }
        invariant(
            link.durableThrough <= link.sentThrough && link.sentThrough <= head,
            "the standby holds \(link.durableThrough) ≤ sent \(link.sentThrough) ≤ head \(head)", report: report)
    }

    /// The REPLICA-APPEND of a payload already encoded (records read from the journal as a batch, or
    /// stamped), from `first`, stamped with this history and what is committed.
    func append(first: UInt64, batchPayload: [UInt8], committed: UInt64) -> Message {
        precondition(first >= 1, "records start at seq 1")
        return Message(header: Header(kind: .replicaAppend, seq: first, ref: committed, history: history.rawValue), payload: batchPayload)
    }
}

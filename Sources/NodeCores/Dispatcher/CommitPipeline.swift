@_spi(Simulation) import FluxCore

/// The way of a sequenced action, burst → durable → committed → released: one of the
/// ``DispatcherCore``'s machines, and the one that owns what may be published and acknowledged.
///
/// It stamps admitted actions with their seqs (strictly increasing from what the journal held), hands
/// each burst to the journal once, hears what the journal made durable, and, once the core says what
/// is committed (durable here and, under `sync`, at the standby), publishes it and releases the ACKs
/// that waited for it. It keeps, between any two events:
/// `committed (durableHead) ≤ durable here (localDurableHead) ≤ head`; everything committed is
/// published; no ACK is released for a seq above what is committed.
struct CommitPipeline {
    /// The history stamped on what is published and acknowledged.
    let history: HistoryID
    /// The newest sequenced action (durable or not yet).
    private(set) var head: UInt64
    /// The newest action published and acknowledged.
    private(set) var durableHead: UInt64
    /// The newest action this dispatcher's own journal has made durable.
    private(set) var localDurableHead: UInt64
    /// Actions stamped in this burst, not yet handed to the journal: their records, written once.
    private var stamped = StampedRecords()
    /// Bursts handed to the journal and not yet all published: published once committed. The first
    /// burst's records before `publishedInFirst` have gone out already.
    private var unpublished: [StampedRecords] = []
    private var publishedInFirst = 0

    /// An ACK waiting until everything up to `upTo` is committed: what it will say, not yet a message
    /// (a batching client's ACKs become entries of one ACK-BATCH, and never messages of their own).
    struct WaitingReply {
        var upTo: UInt64
        var peer: [UInt8]
        var ack: AckBatch.Entry
        /// The client reads ACK-BATCH.
        var batched: Bool
    }
    /// ACKs waiting to be committed, in order.
    private var waitingReplies: [WaitingReply] = []
    /// Under sync replication, the ACK of a quarantine release also waits until the standby's REPLICA-ACK
    /// names the list that records it (`digest`): a new leader then knows the action was released,
    /// and neither serves it again nor lets it be released twice.
    private var heldReleaseReplies: [(reply: WaitingReply, digest: UInt64)] = []

    /// `head` is what the journal holds at start (durable), `committed` what of it counts as committed.
    init(head: UInt64, committed: UInt64, history: HistoryID) {
        precondition(committed <= head, "nothing is committed that the journal does not hold")
        (self.head, self.durableHead, self.localDurableHead, self.history) = (head, committed, head, history)
    }

    /// The seq the next stamped action takes.
    var nextSeq: UInt64 { head + 1 }

    /// Stamps an admitted action: `header.seq` is ``nextSeq``. Its record is encoded once, as the
    /// journal's: the ACTION-BATCH entry and the standby's copy are these bytes.
    mutating func stamp(_ topic: [UInt8], _ topicRange: Range<Int>, header: Header, payload: [UInt8], _ payloadRange: Range<Int>) {
        precondition(header.seq == head + 1, "seqs are stamped in order, without a gap: \(header.seq) after \(head)")
        precondition(header.kind == .action && header.history == history.rawValue, "an action is stamped with this history")
        head = header.seq
        stamped.append(topic: topic, topicRange, header: header, payload: payload, payloadRange)
        assert(stamped.lastSeq == head, "the burst ends at the head")
    }

    /// An ACK for `ack.seq` (up to which it waits) to `peer`, sent once that is committed.
    mutating func acknowledge(_ ack: AckBatch.Entry, to peer: [UInt8], batched: Bool) {
        precondition(ack.seq >= 1 && ack.seq <= head, "an ACK names a sequenced action")
        waitingReplies.append(WaitingReply(upTo: ack.seq, peer: peer, ack: ack, batched: batched))
    }

    /// The burst stamped so far, to hand to the journal (nil: none). From now on it waits to be committed.
    mutating func takeBurst() -> StampedRecords? {
        guard let first = stamped.firstSeq, let last = stamped.lastSeq else { return nil }
        precondition(first > localDurableHead && last == head, "a burst is new to the journal and ends at the head")
        assert(unpublished.last?.lastSeq.map { $0 + 1 == first } ?? true, "bursts follow each other without a gap")
        let burst = stamped
        unpublished.append(burst)
        stamped = StampedRecords()
        return burst
    }

    /// The journal has made everything up to `seq` durable.
    mutating func durable(through seq: UInt64) {
        precondition(seq <= head, "the journal cannot hold what was never sequenced")
        precondition(stamped.firstSeq.map { seq < $0 } ?? true, "the journal cannot hold what it was not handed")
        localDurableHead = max(localDurableHead, seq)
    }

    /// `committed` is committed (durable here and, under `sync`, at the standby): publishes what was not
    /// yet, burst by burst (each run of one app's actions within a burst as one ACTION-BATCH, a lone
    /// action as ACTION). False when it was committed already.
    mutating func commit(through committed: UInt64, into commands: inout [DispatcherCore.Command]) -> Bool {
        guard committed > durableHead else { return false }
        precondition(committed <= localDurableHead, "committed \(committed) before it is durable here (\(localDurableHead))")
        durableHead = committed
        while let burst = unpublished.first {
            let end = burst.records[publishedInFirst...].firstIndex { $0.seq > durableHead } ?? burst.count
            do {
                for message in try burst.publishMessages(publishedInFirst..<end, history: history.rawValue) { commands.append(.publish(message)) }
            } catch {
                preconditionFailure("the dispatcher's own records decode: \(error)")
            }
            guard end == burst.count else {
                publishedInFirst = end
                break
            }
            unpublished.removeFirst()
            publishedInFirst = 0
        }
        // (What the journal held at start is not this leader's to publish: its first burst may start past it.)
        assert(unpublished.first.map { $0.records[publishedInFirst].seq > durableHead } ?? true, "everything committed is published")
        return true
    }

    /// The ACK of a quarantine release just sequenced at the head, to `peer`: it waits until the
    /// standby holds the list that records the release (`digest`) too. False when there is none.
    mutating func holdLastReply(to peer: [UInt8], digest: UInt64) -> Bool {
        guard let reply = waitingReplies.last, reply.upTo == head, reply.peer == peer else { return false }
        waitingReplies.removeLast()
        heldReleaseReplies.append((reply, digest))
        return true
    }

    /// Sends the ACKs whose actions are committed, in order: each batching client's as one ACK-BATCH.
    /// `standbyHolds` is the quarantine list the standby holds, `digest` today's; `ackBeforeDurable`
    /// is the `ack-before-durable` canary's.
    mutating func releaseReplies(standbyHolds: UInt64?, digest: UInt64, ackBeforeDurable: Bool, into commands: inout [DispatcherCore.Command]) {
        if !heldReleaseReplies.isEmpty, let held = standbyHolds {
            // The standby's list records every release up to the one whose list it names (all, when it
            // names today's).
            let through = held == digest ? heldReleaseReplies.count - 1 : (heldReleaseReplies.lastIndex { $0.digest == held } ?? -1)
            var kept: [(reply: WaitingReply, digest: UInt64)] = []
            for (index, entry) in heldReleaseReplies.enumerated() {
                if index <= through && entry.reply.upTo <= durableHead {
                    commands.append(.reply(.intake, peer: entry.reply.peer, ackMessage(entry.reply.ack)))
                } else {
                    kept.append(entry)
                }
            }
            heldReleaseReplies = kept
        }
        var released = 0
        // Per batching client, where its ACK-BATCH goes in the replies and what it holds.
        var batchOf: [[UInt8]: Int] = [:]
        var batches: [(peer: [UInt8], position: Int, entries: [AckBatch.Entry])] = []
        // The batch the last reply went to: consecutive replies to one client skip the lookup.
        var last = -1
        for waiting in waitingReplies {
            guard waiting.upTo <= durableHead || ackBeforeDurable else { break }
            released += 1
            guard waiting.batched else {
                commands.append(.reply(.intake, peer: waiting.peer, ackMessage(waiting.ack)))
                continue
            }
            if last < 0 || batches[last].peer != waiting.peer {
                if let known = batchOf[waiting.peer] {
                    last = known
                } else {
                    last = batches.count
                    batchOf[waiting.peer] = last
                    batches.append((waiting.peer, commands.count, []))
                    // Its place: a lone ACK stays one, more become an ACK-BATCH below.
                    commands.append(.reply(.intake, peer: waiting.peer, ackMessage(waiting.ack)))
                }
            }
            batches[last].entries.append(waiting.ack)
        }
        waitingReplies.removeFirst(released)
        for batch in batches where batch.entries.count > 1 {
            commands[batch.position] = .reply(.intake, peer: batch.peer, AckBatch(entries: batch.entries, history: history.rawValue).message)
        }
        // What waits is what is not committed yet: the first waiting ACK is for a seq above it.
        assert(ackBeforeDurable || waitingReplies.first.map { $0.upTo > durableHead } ?? true, "no committed ACK is left waiting")
    }

    private func ackMessage(_ ack: AckBatch.Entry) -> Message {
        Message(
            header: Header(
                kind: .ack, seq: ack.seq, clientID: ack.clientID, clientSeq: ack.clientSeq, timestamp: ack.timestamp, history: history.rawValue))
    }

    /// What holds between any two events (the type's comment), reported to `report` when broken.
    func checkInvariants(report: ((String) -> Void)?) {
        // Committed only what is durable here, and durable only what was sequenced.
        invariant(
            durableHead <= localDurableHead && localDurableHead <= head, "committed \(durableHead) ≤ durable \(localDurableHead) ≤ head \(head)",
            report: report)
        // Everything committed is published, and nothing is published before it is committed.
        if let burst = unpublished.first {
            invariant(burst.records[publishedInFirst].seq > durableHead, "an action committed at \(durableHead) is left unpublished", report: report)
        }
    }
}

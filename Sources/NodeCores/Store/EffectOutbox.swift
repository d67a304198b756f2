import FluxCore

/// The actions a store's effects sent to the dispatcher's intake, kept until the intake answers.
///
/// Each goes out as a DISPATCH (several of one turn as one DISPATCH-BATCH: ``StoreCore/takeCommands()``)
/// under the store's own client id and the next client seq, and is sent
/// again after `retryMilliseconds` while unanswered: the intake deduplicates by client seq, so a retry
/// never becomes a second action. An intake that refuses one for now (rate limited) doubles its wait,
/// up to ``maxRetryMilliseconds``, and so does one refused as unknown by a dispatcher older than the
/// store (``Answer/held(reason:)``). Bounded: past `limit` unanswered, a new action is refused.
struct EffectOutbox {
    /// What the intake said to an effect's action.
    enum Answer: Equatable {
        /// Not an answer to an action this store's effects are waiting on.
        case notOurs
        /// Refused for now: kept, and sent again after a longer wait.
        case retryLater
        /// Refused in a way a newer dispatcher would not refuse (it does not know the app, the action
        /// type or the message kind yet: a store upgraded before its dispatcher). Kept, sent again after a
        /// longer wait, and counted (``held``) until it is taken: never dropped in silence.
        case held(reason: String)
        /// Accepted: forgotten.
        case accepted
        /// Refused for good: forgotten. `reason` is the intake's.
        case refused(reason: String)
    }

    struct Entry {
        var message: Message
        var sentAtMs: UInt64
        var retryAfterMs: UInt64
        /// Refused by a dispatcher that does not know it yet (``Answer/held(reason:)``).
        var held = false
    }

    static let maxRetryMilliseconds: UInt64 = 30_000

    /// The client id the store's effects dispatch under.
    let clientID: UInt64
    let retryMilliseconds: Int
    let limit: Int
    /// The cluster's effect token (``StoreRules/effectToken``), in each DISPATCH's `ref`: what lets the
    /// intake take an action only an effect may send.
    let token: UInt64
    private var lastClientSeq: UInt64 = 0
    private var unanswered: [UInt64: Entry] = [:]
    /// How many of the unanswered were refused as unknown by the dispatcher, and wait for one that knows them.
    private(set) var held = 0
    /// Actions refused for good since the store started: each is logged with its reason.
    private(set) var refused: UInt64 = 0

    init(clientID: UInt64, retryMilliseconds: Int, limit: Int, token: UInt64 = 0) {
        precondition(limit > 0, "an effect may send something")
        self.clientID = clientID
        self.retryMilliseconds = retryMilliseconds
        self.limit = limit
        self.token = token
    }

    /// How many actions wait for the intake's answer.
    var count: Int { unanswered.count }

    /// The DISPATCH of an effect's action, to send now and again until answered; nil (nothing sent)
    /// when `limit` actions are unanswered already.
    mutating func send(app: String, type: String, payload: [UInt8], now: NodeTime) -> Message? {
        guard unanswered.count < limit else { return nil }
        lastClientSeq += 1
        let message = Message(
            topic: app,
            header: Header(
                kind: .dispatch, ref: token, clientID: clientID, clientSeq: lastClientSeq, timestamp: now.wallNanoseconds, actionType: type),
            payload: payload)
        unanswered[lastClientSeq] = Entry(message: message, sentAtMs: now.milliseconds, retryAfterMs: UInt64(retryMilliseconds))
        assert(unanswered.count <= limit, "the unanswered actions stay within the limit")
        return message
    }

    /// Takes the intake's answer (ACK or NACK).
    mutating func answered(_ reply: Message) -> Answer {
        guard reply.header.clientID == clientID else { return .notOurs }
        let clientSeq = reply.header.clientSeq
        // A second answer to an action already answered (its retry crossed the first answer), or one to
        // a client seq a held action has moved on from: nothing waits for it.
        guard unanswered[clientSeq] != nil else { return .notOurs }
        let reason = reply.kind == .nack ? String(decoding: reply.payload, as: UTF8.self) : ""
        let newerWouldTake = reply.kind == .nack && EffectOutbox.newerDispatcherWouldTake(reason)
        if reply.kind == .nack, reply.header.flags.contains(.retryLater) || newerWouldTake, var entry = unanswered[clientSeq] {
            entry.retryAfterMs = min(entry.retryAfterMs * 2, EffectOutbox.maxRetryMilliseconds)
            if newerWouldTake != entry.held { held += newerWouldTake ? 1 : -1 }
            entry.held = newerWouldTake
            if newerWouldTake {
                // Sent again under the next client seq: this one was refused, so it was never sequenced,
                // and client seqs keep growing. A retry under the old one could find it below what the
                // dispatcher's dedup table let go after thousands of later actions ("dedup window
                // passed"), and be refused for good.
                unanswered[clientSeq] = nil
                lastClientSeq += 1
                entry.message.header.clientSeq = lastClientSeq
                unanswered[lastClientSeq] = entry
            } else {
                unanswered[clientSeq] = entry
            }
            assert(held >= 0 && held <= unanswered.count, "held actions are unanswered ones")
            return newerWouldTake ? .held(reason: reason) : .retryLater
        }
        if let entry = unanswered.removeValue(forKey: clientSeq), entry.held { held -= 1 }
        assert(held >= 0 && held <= unanswered.count, "held actions are unanswered ones")
        guard reply.kind == .nack else { return .accepted }
        refused += 1
        return .refused(reason: reason)
    }

    /// Whether a refusal is one that a newer dispatcher would lift: an app, an action type or a message
    /// kind it does not know, or a protocol version it does not speak. A store is upgraded before its
    /// dispatcher (docs/OPERATIONS.md, "Upgrading"), so its effects may send what the old dispatcher has
    /// never heard of, such as a schedule request; and an old dispatcher cannot flag its refusal as one
    /// to retry, so its words are what tell. Those words are part of the protocol (docs/PROTOCOL.md).
    static func newerDispatcherWouldTake(_ reason: String) -> Bool {
        reason.hasPrefix("unknown app '") || reason.hasPrefix("the intake accepts ") || reason.contains(" has no action '")
            || reason.contains("is not supported (this node speaks")
    }

    /// What to send again at `now`, oldest first: each action unanswered for its whole wait.
    mutating func due(now: NodeTime) -> [Message] {
        guard !unanswered.isEmpty else { return [] }
        var due: [Message] = []
        for (clientSeq, entry) in unanswered.sorted(by: { $0.key < $1.key }) where now.elapsed(since: entry.sentAtMs) >= entry.retryAfterMs {
            unanswered[clientSeq]?.sentAtMs = now.milliseconds
            due.append(entry.message)
        }
        return due
    }
}

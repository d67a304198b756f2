import FluxCore

/// The actions a store's effects sent to the dispatcher's intake, kept until the intake answers.
///
/// Each goes out as a DISPATCH (several of one turn as one DISPATCH-BATCH: ``StoreCore/takeCommands()``)
/// under the store's own client id and the next client seq, and is sent
/// again after `retryMilliseconds` while unanswered: the intake deduplicates by client seq, so a retry
/// never becomes a second action. An intake that refuses one for now (rate limited) doubles its wait,
/// up to ``maxRetryMilliseconds``. Bounded: past `limit` unanswered, a new action is refused.
struct EffectOutbox {
    /// What the intake said to an effect's action.
    enum Answer: Equatable {
        /// Not an answer to this store's effects.
        case notOurs
        /// Refused for now: kept, and sent again after a longer wait.
        case retryLater
        /// Accepted: forgotten.
        case accepted
        /// Refused for good: forgotten. `reason` is the intake's.
        case refused(reason: String)
    }

    struct Entry {
        var message: Message
        var sentAtMs: UInt64
        var retryAfterMs: UInt64
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

    init(clientID: UInt64, retryMilliseconds: Int, limit: Int, token: UInt64 = 0) {
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
        return message
    }

    /// Takes the intake's answer (ACK or NACK).
    mutating func answered(_ reply: Message) -> Answer {
        guard reply.header.clientID == clientID else { return .notOurs }
        let clientSeq = reply.header.clientSeq
        if reply.kind == .nack, reply.header.flags.contains(.retryLater), var entry = unanswered[clientSeq] {
            entry.retryAfterMs = min(entry.retryAfterMs * 2, EffectOutbox.maxRetryMilliseconds)
            unanswered[clientSeq] = entry
            return .retryLater
        }
        unanswered[clientSeq] = nil
        return reply.kind == .nack ? .refused(reason: String(decoding: reply.payload, as: UTF8.self)) : .accepted
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

@_spi(Simulation) import FluxCore

/// Whether a DISPATCH is sequenced, answered as the retry of one already sequenced, or NACKed, and
/// why: one of the ``DispatcherCore``'s machines, with one verdict per dispatch.
///
/// It keeps what admission needs to remember: which (client id, client seq) were sequenced as which
/// seq (``DedupTable``) and each client's rate (``RateLimiter``). Bad input changes nothing but the
/// rate spent: unknown apps, invalid actions, payloads over their limit, clients over their rate.
struct Admission {
    /// A DISPATCH as the intake reads it: its header, and its topic and payload where they lie (a
    /// message's own arrays, or ranges of the DISPATCH-BATCH that carried it).
    struct Dispatch {
        var header: Header
        var topic: [UInt8]
        var topicRange: Range<Int>
        var payload: [UInt8]
        var payloadRange: Range<Int>

        init(header: Header, topic: [UInt8], topicRange: Range<Int>, payload: [UInt8], payloadRange: Range<Int>) {
            (self.header, self.topic, self.topicRange, self.payload, self.payloadRange) = (header, topic, topicRange, payload, payloadRange)
        }

        init(_ message: Message) {
            self.init(
                header: message.header, topic: message.topic, topicRange: message.topic.indices, payload: message.payload,
                payloadRange: message.payload.indices)
        }

        /// Each entry of a DISPATCH-BATCH as if it had come alone, read where it lies in the batch (no
        /// copy, no message of its own), flagged so that its ACKs go out together, as an ACK-BATCH.
        static func each(in batch: Message, _ body: (Dispatch) -> Void) throws {
            precondition(batch.kind == .dispatchBatch, "a DISPATCH-BATCH holds the dispatches")
            for entry in try DispatchBatch.entries(of: batch) {
                var header = entry.header
                header.flags.insert(.batchReplies)
                body(Dispatch(header: header, topic: batch.payload, topicRange: entry.topic, payload: batch.payload, payloadRange: entry.payload))
            }
        }
    }

    enum Verdict {
        /// Sequence it with this header (its client id scoped, the flags the dispatcher's), this payload
        /// (where it lies), on `owner`'s share of the dedup table; `schedules`: a request on
        /// ``Schedules/topic`` the book takes once sequenced.
        case sequence(header: Header, payload: [UInt8], payloadRange: Range<Int>, owner: UInt64, schedules: Bool)
        /// A retry of what was sequenced as `seq`: answered again once that is committed.
        case duplicate(of: UInt64, clientSeq: UInt64)
        /// Refused, with why and the flags of its NACK.
        case nack(String, flags: Header.Flags)
    }

    let catalog: AppCatalog
    /// Scopes client ids to the authenticated key that sent them.
    let clientScope: ClientScope
    private var dedup: DedupTable
    private var rateLimiter: RateLimiter?

    init(catalog: AppCatalog, clientScope: ClientScope, dedupWindow: Int, clientRate: Int?) {
        self.catalog = catalog
        self.clientScope = clientScope
        self.dedup = DedupTable(window: dedupWindow)
        self.rateLimiter = clientRate.map { RateLimiter(perSecond: $0) }
    }

    /// The verdict on `message` from `peer` (authenticated as `principal`, nil without CURVE), given the
    /// dispatcher's state: why it no longer leads, why its journal cannot be written, its schedules.
    mutating func admit(
        _ message: Dispatch, from peer: [UInt8], principal: [UInt8]?, now: NodeTime, steppedDown: String?, journalProblem: String?,
        brokenRules: Set<Canary>, schedules: ScheduleBook, host: any MiddlewareHost
    ) -> Verdict {
        // What the client sent, for the answers; `header` holds the id as the dispatcher keeps it.
        let sent = message.header
        if let reason = steppedDown, !brokenRules.contains(.oldLeaderAcksAfterLease) {
            return .nack("this dispatcher no longer leads (\(reason)): send to the leader", flags: [.retryLater, .notLeader])
        }
        var header = sent
        header.flags.remove(.byEffect)  // the dispatcher's to set
        if let principal, header.clientID != 0 { header.clientID = clientScope.clientID(principal, header.clientID) }
        // Whose budget and dedup share this is: the authenticated key, else the connection.
        let owner = principal.map { clientScope.owner($0) } ?? RateLimiter.key(peer)
        if header.clientID != 0, !brokenRules.contains(.dedup) {
            switch dedup.lookup(client: header.clientID, clientSeq: header.clientSeq) {
            case .sequenced(let seq):
                // A retry of something already sequenced: answer again once it is durable, sequence nothing.
                return .duplicate(of: seq, clientSeq: header.clientSeq)
            case .forgotten:
                // Its entry was let go: it may be in the journal already, so it is not sequenced again.
                return .nack(DispatcherCore.dedupWindowPassed, flags: [])
            case .new: break
            }
        }
        // A retry of something sequenced waits (above); nothing new is taken while the journal cannot be written.
        if let problem = journalProblem {
            return .nack("the journal cannot be written (\(problem)): nothing new is taken until it can", flags: .retryLater)
        }
        let appName = String(decoding: message.topic[message.topicRange], as: UTF8.self)
        let scheduling = Schedules.isScheduling(message.topic, in: message.topicRange)
        let limit = scheduling ? catalog.scheduleRequestLimit : catalog.limit(app: appName, type: header.actionType)
        guard message.payloadRange.count <= limit else {
            return .nack("the payload of \(appName).\(header.actionType) is \(message.payloadRange.count) bytes; the limit is \(limit)", flags: [])
        }
        // Optional chaining mutates the limiter in place (a copy would copy every client's bucket).
        if rateLimiter?.allow(owner, now: now.milliseconds &* 1_000_000) == false {
            return .nack("rate limited: this client may dispatch \(rateLimiter?.perSecond ?? 0) actions per second", flags: .retryLater)
        }
        let origin = catalog.origin(of: sent, principal: principal)
        if scheduling {
            let body = message.payloadRange == message.payload.indices ? message.payload : Array(message.payload[message.payloadRange])
            switch schedules.admit(header.actionType, payload: body, sent: sent, origin: origin, catalog: catalog, now: now, host: host) {
            case .failure(let refusal):
                return .nack(refusal.reason, flags: [])
            case .success(let admitted):
                // Who made it goes into the journal: effects' schedules have a share of the book of their own.
                header.flags = origin == .effect ? .byEffect : []
                return .sequence(header: header, payload: admitted, payloadRange: admitted.indices, owner: owner, schedules: true)
            }
        }
        guard let (app, inPlace) = catalog.apps[appName] else {
            let known = catalog.apps.keys.sorted().joined(separator: ", ")
            // Every app the dispatcher's binary hosts is taken, with a store or not yet: a store added to
            // the cluster later replays its app's actions from the journal.
            return .nack("unknown app '\(appName)' (the dispatcher takes actions for: \(known))", flags: [])
        }
        guard !header.actionType.isEmpty else { return .nack("DISPATCH without an action type", flags: []) }
        if catalog.refuses(sent, app: appName, type: header.actionType) {
            return .nack(
                "\(appName).\(header.actionType) is sent by the app's effects only (it is marked .effect in the app's catalog): a client cannot dispatch it",
                flags: [])
        }
        // Taken as it is, checked where it lies; else decoded, validated, then through the app's
        // middleware chain, which may rewrite it.
        var payload = message.payload, payloadRange = message.payloadRange
        if inPlace?.takesAsIs(actionType: header.actionType, payload: payload, in: payloadRange) != true {
            do {
                payload = try app.admit(
                    actionType: header.actionType, payload: payloadRange == payload.indices ? payload : Array(payload[payloadRange]),
                    client: sent.clientID, origin: origin, host: host)
                payloadRange = payload.indices
            } catch {
                return .nack(error.reason, flags: [])
            }
        }
        assert(!header.flags.contains(.byEffect), "only a schedule's request carries who made it")
        return .sequence(header: header, payload: payload, payloadRange: payloadRange, owner: owner, schedules: false)
    }

    /// What was sequenced as `seq` (by this dispatcher, on `owner`'s share, or found in the journal at
    /// start with owner 0): a retry of it is a duplicate from now on.
    mutating func sequenced(client: UInt64, clientSeq: UInt64, seq: UInt64, owner: UInt64 = 0) {
        precondition(seq >= 1, "seqs start at 1")
        guard client != 0 else { return }
        dedup.record(client: client, clientSeq: clientSeq, seq: seq, owner: owner)
    }

    /// The seq the quarantine release `header` (its client id as sent) was sequenced as, if the table
    /// still knows it: a release's client id is scoped by ``QuarantineBook/releasePrincipal``.
    func releaseSeq(_ header: Header) -> UInt64? {
        guard header.clientID != 0 else { return nil }
        return dedup.seq(client: clientScope.clientID(QuarantineBook.releasePrincipal, header.clientID), clientSeq: header.clientSeq)
    }

    /// The seq a (client id, client seq) was sequenced as, if the table still knows it.
    func seq(client: UInt64, clientSeq: UInt64) -> UInt64? { dedup.seq(client: client, clientSeq: clientSeq) }
}

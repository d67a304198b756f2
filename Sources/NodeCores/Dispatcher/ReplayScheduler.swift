import FluxCore
import Logging

/// The replay answers a dispatcher is serving (``ReplayPlan``s, one per request the core accepted):
/// at most one per peer, a newer request replacing the older, served a slice per loop turn, each in
/// turn, so that replays share the node's thread fairly with the intake and a long one never delays
/// an ACK much.
///
/// What the answers hold in libzmq is bounded in bytes across all peers (``queued``, a
/// ``QueuedBytes`` of ``maxQueuedBytes``, at most ``maxQueuedBytesPerPeer`` a peer): a batch goes
/// out only within the budget, and the replay ROUTER queues at most ``queueMessages`` messages a peer.
/// An answer whose peer's queue is full, or that the budget cannot take yet, waits where it is; one
/// that has waited ``StalledPeers/pauseMilliseconds`` is dropped, and its peer left alone for a while
/// (``StalledPeers``): it asks again if it lives. A peer that leaves gives its bytes back.
///
/// The dispatcher's shell and the simulator both serve replays through it: the shell sends on its
/// replay ROUTER, the simulator on its network.
public struct ReplayScheduler: Sendable {
    /// Bytes of replay a dispatcher serves per loop turn, between drains of its intake.
    public static let bytesPerTurn = 256 << 10
    /// Answers in progress at most; requests past it are dropped (their peers ask again).
    public static let maxConcurrent = 1024
    /// Messages the replay ROUTER queues per peer (its SNDHWM): a peer that does not read holds at
    /// most this many, plus the one libzmq is writing. Few, so that a send that goes through soon
    /// shows what a peer has taken (``QueuedBytes``); a reader is refilled every turn.
    public static let queueMessages = 4
    /// Bytes of replay all peers may hold in libzmq together, and one peer at most: room for its
    /// whole window of batches of ``ReplayPlan/maxBatchBytes``, so that only a batch of one larger
    /// action waits for a peer's share.
    public static let maxQueuedBytes = 64 << 20
    public static let maxQueuedBytesPerPeer = 6 << 20
    /// A waiting answer is tried again after this long (the loop does not spin on a full queue).
    public static let retryMilliseconds: UInt64 = 1

    /// The answers in progress, in the order their next slices are served.
    public private(set) var inProgress: [ReplayPlan] = []
    /// What the replay ROUTER may hold for each peer, in bytes.
    public private(set) var queued = QueuedBytes(
        budget: ReplayScheduler.maxQueuedBytes, perPeer: ReplayScheduler.maxQueuedBytesPerPeer, window: ReplayScheduler.queueMessages + 1,
        firstProbeMilliseconds: 20, maxProbeMilliseconds: StalledPeers.pauseMilliseconds)
    /// Peers whose answer waits (their queue was full, or the budget could not take it), since when.
    private var waitingSince: [[UInt8]: UInt64] = [:]
    private var stalled = StalledPeers()
    private let maxConcurrent: Int

    public init(maxConcurrent: Int = ReplayScheduler.maxConcurrent) {
        precondition(
            ReplayScheduler.maxQueuedBytesPerPeer >= (ReplayScheduler.queueMessages + 1) * (ReplayPlan.maxBatchBytes + (64 << 10)),
            "a peer's share holds its window of full batches")
        self.maxConcurrent = maxConcurrent
    }

    /// Nothing to serve: the loop may wait for its next event.
    public var isEmpty: Bool { inProgress.isEmpty }

    /// How long the loop may wait before it serves again (0: at once), nil when only its other
    /// events matter: answers that wait are tried again after ``retryMilliseconds``, and peers
    /// holding bytes are probed when due.
    public func nextServiceMs(now: UInt64) -> UInt64? {
        if inProgress.contains(where: { waitingSince[$0.peer] == nil }) { return 0 }
        let retry = inProgress.isEmpty ? nil : ReplayScheduler.retryMilliseconds
        let probe = queued.nextProbeMs.map { $0 > now ? $0 - now : 0 }
        switch (retry, probe) {
        case (let retry?, let probe?): return min(retry, probe)
        case (let retry?, nil): return retry
        case (nil, let probe): return probe
        }
    }

    /// The answer to a request, served from the next turn on. It replaces the answer in progress to
    /// the same peer; it is dropped if the peer is stalled at `now` (monotonic ms) or too many answers
    /// are in progress.
    public mutating func queue(_ plan: ReplayPlan, now: UInt64) {
        guard !stalled.contains(plan.peer, now: now) else { return }
        if let index = inProgress.firstIndex(where: { $0.peer == plan.peer }) {
            inProgress[index] = plan
        } else if inProgress.count < maxConcurrent {
            inProgress.append(plan)
        }
        assert(inProgress.count <= maxConcurrent && inProgress.filter { $0.peer == plan.peer }.count <= 1, "one answer a peer, and few in all")
    }

    /// One turn's share: about `budget` bytes of the answers in progress, a slice of each in turn,
    /// read with `batches` (``ReplayPlan/serve(budget:batches:logger:)``) and handed to `deliver`,
    /// which says what became of each message. Peers holding bytes with no answer in progress are
    /// probed with `probe` when due. `now` is the monotonic clock in ms.
    public mutating func serve(
        budget: Int, now: UInt64, batches: (UInt64, Int, Int) throws -> ReplayPlan.Batch?,
        deliver: (_ peer: [UInt8], Message) -> QueuedBytes.Delivery, probe: (_ peer: [UInt8]) -> (QueuedBytes.Delivery, bytes: Int),
        logger: Logger
    ) {
        // Not a peer being served this turn: its own sends tell as much.
        for peer in queued.probesDue(now: now) where !inProgress.contains(where: { $0.peer == peer && waitingSince[peer] == nil }) {
            let (delivery, bytes) = probe(peer)
            queued.probed(peer, delivery, bytes: bytes, now: now)
        }
        var left = budget
        var turn = inProgress
        inProgress = []
        var waiting: [ReplayPlan] = []
        while left > 0, !turn.isEmpty {
            let plan = turn.removeFirst()
            switch step(plan, now: now, batches: batches, deliver: deliver, logger: logger) {
            case .continues(let rest, let bytes):
                left -= bytes
                turn.append(rest)
            case .done(let bytes):
                left -= bytes
            case .waits(let rest):
                waiting.append(rest)
            }
        }
        inProgress = turn + waiting
        precondition(inProgress.count <= maxConcurrent, "answers in progress stay bounded")
        precondition(queued.total <= queued.budget || queued.peerCount <= 1, "only a message larger than the budget passes it, alone")
    }

    private enum Step {
        case continues(ReplayPlan, bytes: Int)
        case done(bytes: Int)
        case waits(ReplayPlan)
    }

    /// The next batch of `plan` (and its end, if it is the last), within the budget.
    private mutating func step(
        _ plan: ReplayPlan, now: UInt64, batches: (UInt64, Int, Int) throws -> ReplayPlan.Batch?,
        deliver: ([UInt8], Message) -> QueuedBytes.Delivery, logger: Logger
    ) -> Step {
        let peer = plan.peer
        let (messages, rest) = plan.serve(budget: 1, batches: batches, logger: logger)
        var unsent = plan
        var bytes = 0
        for message in messages {
            let size = message.wireBytes
            let delivery: QueuedBytes.Delivery? = queued.admits(size, to: peer) ? deliver(peer, message) : nil
            switch delivery {
            case .sent:
                queued.sent(size, to: peer, now: now)
                bytes += size
                waitingSince[peer] = nil
                if message.kind == .replayBatch { unsent = plan.advanced(past: message) }
            case .gone:
                queued.gone(peer)
                waitingSince[peer] = nil
                return .done(bytes: bytes)
            case .full, nil:
                // Its queue is full, or the budget is: it waits, up to a pause. Held back by its own
                // share, it is probed at once: what it read makes room.
                if delivery == nil { queued.probeSoon(peer, now: now) }
                let since = waitingSince[peer] ?? now
                guard now - since < StalledPeers.pauseMilliseconds else {
                    logger.notice(
                        "replay peer not reading; its answer is dropped",
                        metadata: ["from": "\(plan.from)", "held": "\(queued.held(by: peer))", "queued": "\(queued.total)"])
                    waitingSince[peer] = nil
                    stalled.stall(peer, now: now)
                    return .done(bytes: bytes)
                }
                waitingSince[peer] = since
                return .waits(unsent)
            }
        }
        guard let rest else { return .done(bytes: bytes) }
        return .continues(rest, bytes: bytes)
    }

    /// The bytes released since the last call (``QueuedBytes/takeReleased()``).
    public mutating func takeReleased() -> Int { queued.takeReleased() }
}

import FluxCore
import Logging

/// The replay answers a dispatcher is serving (``ReplayPlan``s, one per request the core accepted):
/// at most one per peer, a newer request replacing the older, served a slice per loop turn, each in
/// turn, so that replays share the node's thread fairly with the intake and a long one never delays
/// an ACK much. A peer that does not read its answer (a send to it fails) loses it and is left alone
/// for a while (``StalledPeers``); it asks again if it lives.
///
/// The dispatcher's shell and the simulator both serve replays through it: the shell sends on its
/// replay ROUTER, the simulator on its network.
public struct ReplayScheduler: Sendable {
    /// Bytes of replay a dispatcher serves per loop turn, between drains of its intake.
    public static let bytesPerTurn = 256 << 10
    /// Answers in progress at most; requests past it are dropped (their peers ask again).
    public static let maxConcurrent = 1024

    /// The answers in progress, in the order their next slices are served.
    public private(set) var inProgress: [ReplayPlan] = []
    private var stalled = StalledPeers()
    private let maxConcurrent: Int

    public init(maxConcurrent: Int = ReplayScheduler.maxConcurrent) { self.maxConcurrent = maxConcurrent }

    /// Nothing to serve: the loop may wait for its next event.
    public var isEmpty: Bool { inProgress.isEmpty }

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
    }

    /// One turn's share: about `budget` bytes of the answers in progress, a slice of each in turn,
    /// read with `batches` (``ReplayPlan/serve(budget:batches:logger:)``) and sent with `send`, which
    /// says whether the peer took the message. A peer that did not loses the rest of its answer and is
    /// stalled from `now` (monotonic ms).
    public mutating func serve(
        budget: Int, now: UInt64, batches: (UInt64, Int, Int) throws -> ReplayPlan.Batch?, send: (_ peer: [UInt8], Message) -> Bool,
        logger: Logger
    ) {
        var left = budget
        while left > 0, !inProgress.isEmpty {
            let plan = inProgress.removeFirst()
            let (messages, rest) = plan.serve(budget: left, batches: batches, logger: logger)
            var delivered = true
            for message in messages {
                left -= message.payload.count
                guard send(plan.peer, message) else {
                    delivered = false
                    break
                }
            }
            if !delivered {
                // Gone, or its queue is full: it does not read. Drop the answer; it asks again if it lives.
                logger.notice("replay peer not reading; its answer is dropped", metadata: ["from": "\(plan.from)"])
                stalled.stall(plan.peer, now: now)
            } else if let rest {
                inProgress.append(rest)
            }
            if messages.isEmpty { break }
        }
    }
}

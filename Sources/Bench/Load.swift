import FluxCore
import Foundation
import NodeCores
import NodeSupport
import Synchronization
import ZeroMQ

/// Counters the sending thread updates and the main thread reads for the progress line.
public final class LoadProgress: Sendable {
    let sentCount = Atomic<Int>(0)
    let ackedCount = Atomic<Int>(0)
    /// Seconds the receiving thread closed and nobody took yet (``takeFinishedSeconds()``).
    let finished = Mutex<[LiveSecond]>([])
    public init() {}
    public var sent: Int { sentCount.load(ordering: .relaxed) }
    public var acked: Int { ackedCount.load(ordering: .relaxed) }
}

/// The dispatching side of a run: `clients` DEALER connections on one thread, each its own client id,
/// sending what fell due at the scheduled instants (a timerfd wakes the thread on time) and reading
/// ACKs. What falls due together goes as one DISPATCH-BATCH per connection; nothing waits to fill one.
public struct LoadClient: Sendable {
    public var intake: String
    /// What action `i` is: its app, type and payload.
    public var mix: LoadMix
    public var clients: Int
    /// CURVE settings for tcp (nil: none).
    public var security: Security.Settings? = nil
    /// After the last action is due, how long to wait for outstanding answers.
    public var answerTimeoutNanoseconds: UInt64 = 10_000_000_000
    /// A dispatch unanswered this long, while a later one of its connection was answered (or nothing
    /// was answered for as long), is sent again with its client id and client seq, so the dispatcher
    /// deduplicates it: what a dispatcher took and died with reaches the new leader of a pair. One
    /// that a pair's old leader turned away (NACK not-leader) is sent again at the next look (an
    /// eighth of this). Only the newest 90% of what the dispatcher can deduplicate is sent again. An
    /// overloaded dispatcher, answering in order however late, gets no resends. Latency still counts
    /// from the due instant.
    public var resendAfterNanoseconds: UInt64 = 1_000_000_000
    /// How many of one client's newest dispatches the dispatcher remembers (``DispatcherRules/dedupWindow``):
    /// an older one is never sent again, since it could then be sequenced twice.
    public var dedupWindow = Defaults.dedupWindow

    public init(intake: String, mix: LoadMix, clients: Int) {
        self.intake = intake
        self.mix = mix
        self.clients = max(1, clients)
    }

    /// One action type with payloads used in turn (action `i` sends `payloads[i % count]`).
    public init(intake: String, app: String, actionType: String, payloads: [[UInt8]], clients: Int) {
        self.init(intake: intake, mix: LoadMix(app: app, type: actionType, payloads: payloads), clients: clients)
    }

    /// The least time between two of the timer's wake-ups. Below 20k actions/s each action gets its
    /// own, on time; from 20k/s the timer ticks every quantum and each tick sends every action that
    /// fell due since the last (each action's latency still counts from its own due instant). A
    /// wake-up costs about 10 µs on a VM, and setting a timer a hypervisor exit, so one of each per
    /// action at 100k/s would cost the client more than the cluster spends on the action. The
    /// floor's C client does the same.
    static let timerWakeQuantum: UInt64 = 50_000

    /// Runs the schedule from `start` (monotonic ns) on the calling thread.
    public func run(_ schedule: OpenLoopSchedule, start: UInt64, progress: LoadProgress, context: Context = .shared) throws -> TrialLog {
        TimerFD.tightenTimerSlack()
        var log = TrialLog(schedule: schedule)
        var sockets: [Socket] = []
        defer { for socket in sockets { socket.close() } }
        for _ in 0..<clients {
            let socket = try SocketDefaults.dealer(context)
            try socket.setOption(.linger, 0)
            try socket.connectSecurely(intake, security)
            sockets.append(socket)
        }
        // Where ZFLUX_NODE_SLICE_US asks the nodes' threads for a shorter slice (NodeThreadSlice), the client
        // asks for the same, as the floor's C client does, so that the nodes do not make the measurer wait.
        // A refusal leaves the default, as it does the nodes' (each node says so on its stderr).
        _ = NodeThreadSlice.ask(try? NodeThreadSlice.slice())
        let clientIDs = (0..<clients).map { _ in UInt64.random(in: 1...UInt64.max) }
        let timer = try TimerFD()
        let topics = mix.kinds.map { Array($0.app.utf8) }
        var next = 0
        var answered = 0
        // For resends: when each action was last sent, and whether it was answered (ACK or a NACK that
        // is not "ask the leader"); everything before `oldestOpen` is answered.
        var sentAt = [UInt64](repeating: 0, count: schedule.count)
        var done = [Bool](repeating: false, count: schedule.count)
        var oldestOpen = 0
        var lastSweep: UInt64 = 0
        // Per connection, the newest action answered; and when any answer last came.
        var newestAnswered = [Int](repeating: -1, count: clients)
        var lastAnswerAt = start
        // A new leader rebuilds its dedup table from the journal's newest 65,536 records.
        let resendReach = min(dedupWindow * clients, Int(DispatcherCore.dedupRecoveryRecords)) * 9 / 10
        // Turned away by a member that no longer leads: sent again at the next look.
        var turnedAway: [Int] = []
        // This second's ACK latencies, handed to `progress` a second at a time.
        var live = LiveSecondRecorder()
        /// Sends action `position`, of mix kind `kind`, on its client's connection; false if the queue
        /// is full. A resend is the same message: same client id and client seq.
        func dispatch(_ position: Int, kind: Int) -> Message {
            Message(
                topic: topics[kind],
                header: Header(
                    kind: .dispatch, flags: .batchReplies, clientID: clientIDs[position % clients], clientSeq: UInt64(position + 1),
                    actionType: mix.kinds[kind].type),
                payload: mix.payload(of: position))
        }
        func send(_ position: Int, kind: Int) throws -> Bool {
            try sockets[position % clients].send(dispatch(position, kind: kind).frames, dontWait: true)
        }
        /// Sends what fell due and has not been sent, `next..<due`, each connection's share as few
        /// DISPATCH-BATCHes as the limits allow (one, mostly; a lone one as DISPATCH): one message per
        /// connection per turn, however many fell due. What it sends is marked (`sentAt`, `log.kind`),
        /// so a connection whose queue was full does not make the others send theirs again. Returns
        /// where sending stopped: `due`, or the first action of a connection whose queue was full.
        func sendDue(from next: Int, to due: Int, now: UInt64) throws -> Int {
            let end = min(due, next + DispatchBatch.maxDispatches * clients)
            var stopped = end
            for client in 0..<clients {
                var position = next + (client - next % clients + clients) % clients
                var positions: [Int] = []
                var batch: [Message] = []
                while position < end {
                    if sentAt[position] == 0 {
                        positions.append(position)
                        batch.append(dispatch(position, kind: mix.kind(of: position)))
                    }
                    position += clients
                }
                var sent = 0
                for message in DispatchBatch.messages(for: batch) {
                    guard try sockets[client].send(message.frames, dontWait: true) else { break }
                    sent += message.kind == .dispatchBatch ? Int(message.header.seq) : 1
                }
                for position in positions.prefix(sent) {
                    sentAt[position] = now
                    log.kind[position] = UInt16(mix.kind(of: position))
                }
                if sent < positions.count { stopped = min(stopped, positions[sent]) }
            }
            return stopped
        }
        // The instant the timer is set for, and the one it last fired at (see `timerWakeQuantum`).
        var armed: UInt64 = 0
        var lastTimer: UInt64 = 0
        // At rates where an action falls due every quantum or sooner, the timer ticks every quantum
        // from the start and is never set again; below, it is set for each due instant.
        let periodic = schedule.rate * Double(LoadClient.timerWakeQuantum) >= 1e9
        if periodic { timer.arm(atMonotonicNanoseconds: start, every: LoadClient.timerWakeQuantum) }
        while true {
            let now = MonotonicClock.nowNanoseconds()
            let elapsed = now >= start ? now - start : 0
            live.advance(toElapsed: elapsed, sent: next, acked: answered, progress: progress)
            if now >= start {
                let due = schedule.dueCount(atElapsed: elapsed)
                while next < due {
                    let sent = try sendDue(from: next, to: due, now: now)
                    guard sent > next else { break }
                    next = sent
                }
                log.sent = next
                progress.sentCount.store(next, ordering: .relaxed)
                // A few times a second: send again what went unanswered (a failover; a dispatcher that
                // died holding it). Only the in-flight stretch is looked at, so this costs nothing when
                // every answer comes.
                if now - lastSweep >= resendAfterNanoseconds / 8 {
                    lastSweep = now
                    // Oldest first, each once, and only what a new leader can still deduplicate; what
                    // cannot be sent now (a full queue) waits for the next look.
                    var unsent: [Int] = []
                    for position in Set(turnedAway).sorted() where !done[position] && position + resendReach >= next {
                        guard unsent.isEmpty, try send(position, kind: Int(log.kind[position])) else {
                            unsent.append(position)
                            continue
                        }
                        sentAt[position] = now
                        log.resent += 1
                    }
                    turnedAway = unsent
                    while oldestOpen < next && done[oldestOpen] { oldestOpen += 1 }
                    var position = max(oldestOpen, next - min(next, resendReach))
                    let stalled = now >= lastAnswerAt + resendAfterNanoseconds
                    // Up to the first action due less than a resend interval ago (a resent one may be
                    // newer than those after it: each is judged by its own last send).
                    while position < next, start + schedule.offset(of: position) + resendAfterNanoseconds <= now {
                        let client = position % clients
                        if !done[position] && now - sentAt[position] >= resendAfterNanoseconds && (stalled || newestAnswered[client] > position) {
                            guard try send(position, kind: Int(log.kind[position])) else { break }
                            sentAt[position] = now
                            log.resent += 1
                        }
                        position += 1
                    }
                }
            }
            if next >= schedule.count {
                if answered >= schedule.count || elapsed > schedule.span + answerTimeoutNanoseconds { break }
                if periodic && armed != .max {
                    // Everything is sent: only answers wake the thread now.
                    timer.disarm()
                    armed = .max
                }
            } else if !periodic {
                // Blocked by a full queue: look again shortly; otherwise wake when the next one is due.
                let dueAt = start + schedule.offset(of: next)
                let at = max(dueAt > now ? dueAt : now + 20_000, lastTimer + LoadClient.timerWakeQuantum)
                // An ACK woke the thread, not the timer: it is still set for this instant.
                if at != armed {
                    timer.arm(atMonotonicNanoseconds: at)
                    armed = at
                }
            }
            var poller = Poller()
            for socket in sockets { poller.add(.socket(socket)) }
            let timerIndex = poller.add(.fileDescriptor(timer.descriptor))
            _ = try poller.poll(timeoutMilliseconds: 100)
            if poller.isReadable(timerIndex) {
                timer.drain()
                lastTimer = armed
            }
            for (index, socket) in sockets.enumerated() where poller.isReadable(index) {
                let at = MonotonicClock.nowNanoseconds() - start
                live.advance(toElapsed: at, sent: next, acked: answered, progress: progress)
                while let frames = try socket.receive(dontWait: true) {
                    // The client asks for its ACKs batched: one message may answer many dispatches.
                    guard let message = try? Message(frames: frames), let replies = try? AckBatch.unpack(message) else { continue }
                    for reply in replies {
                        let position = Int(reply.header.clientSeq) - 1
                        // A resend may be answered twice: the first answer counts.
                        guard (0..<schedule.count).contains(position), !done[position] else { continue }
                        switch reply.kind {
                        case .ack:
                            log.acknowledge(index: position, seq: reply.header.seq, at: at, sequencedAtNanoseconds: reply.header.timestamp)
                            live.record(latencyNanoseconds: at &- min(at, schedule.offset(of: position)))
                        case .nack where reply.header.flags.contains(.notLeader):
                            // A pair's member that no longer leads: sent again (to the leader) at the next look.
                            turnedAway.append(position)
                            continue
                        case .nack:
                            log.nacked += 1
                            if log.firstRefusal == nil { log.firstRefusal = String(decoding: reply.payload, as: UTF8.self) }
                        default:
                            continue
                        }
                        done[position] = true
                        answered += 1
                        newestAnswered[position % clients] = max(newestAnswered[position % clients], position)
                        lastAnswerAt = start + at
                    }
                }
                progress.ackedCount.store(answered, ordering: .relaxed)
            }
        }
        live.finish(sent: next, acked: answered, progress: progress)
        return log
    }
}

/// Records what one subscriber sees, from any thread.
public final class ArrivalLog: Sendable {
    private let arrivals = Mutex<[Arrival]>([])
    /// The seqs of actions the store refused (REJECTED), each with its reason.
    private let refusals = Mutex<[UInt64: String]>([:])
    private let updateBytes = Atomic<Int>(0)
    private let updateCount = Atomic<Int>(0)
    public let name: String
    /// The app of the store it follows.
    public let app: String

    public init(name: String, app: String = "") {
        self.name = name
        self.app = app
    }

    public func record(_ arrival: Arrival) {
        arrivals.withLock { list in
            if let last = list.last, last.version >= arrival.version { return }
            list.append(arrival)
        }
    }

    public func countUpdate(bytes: Int) {
        updateBytes.add(bytes, ordering: .relaxed)
        updateCount.add(1, ordering: .relaxed)
    }

    /// The store refused the action at `seq` (its REJECTED reached this view).
    package func recordRefusal(seq: UInt64, reason: String) {
        refusals.withLock { if $0[seq] == nil { $0[seq] = reason } }
    }

    public var latestVersion: UInt64 { arrivals.withLock { $0.last?.version ?? 0 } }
    public var all: [Arrival] { arrivals.withLock { $0 } }
    package var refused: [UInt64: String] { refusals.withLock { $0 } }
    public func reset() {
        arrivals.withLock { $0.removeAll(keepingCapacity: true) }
        refusals.withLock { $0.removeAll() }
    }
    public var meanUpdateBytes: Double? {
        let count = updateCount.load(ordering: .relaxed)
        return count == 0 ? nil : Double(updateBytes.load(ordering: .relaxed)) / Double(count)
    }
}

/// What happened to each action of one open-loop run, by its index in the schedule.
public struct TrialLog: Sendable {
    public let schedule: OpenLoopSchedule
    /// Nanoseconds after the start when the ACK arrived (0: no ACK).
    public var ackAtNanoseconds: [UInt64]
    /// The global sequence number the ACK gave (0: none).
    public var seq: [UInt64]
    /// When the dispatcher sequenced the action (its wall clock, from the ACK; 0: unknown).
    public var sequencedAtNanoseconds: [Int64]
    /// Which kind of the mix (``LoadMix``) each action was: its app decides which views must show it.
    public var kind: [UInt16]
    public var nacked = 0
    /// What the dispatcher said to the first refused action.
    public var firstRefusal: String? = nil
    public var sent = 0
    /// Dispatches sent again, unanswered after ``LoadClient/resendAfterNanoseconds`` or turned away by a
    /// member of a pair that no longer leads.
    public var resent = 0

    public init(schedule: OpenLoopSchedule) {
        self.schedule = schedule
        ackAtNanoseconds = Array(repeating: 0, count: schedule.count)
        seq = Array(repeating: 0, count: schedule.count)
        sequencedAtNanoseconds = Array(repeating: 0, count: schedule.count)
        kind = Array(repeating: 0, count: schedule.count)
    }

    public mutating func acknowledge(index: Int, seq: UInt64, at elapsed: UInt64, sequencedAtNanoseconds stamp: Int64) {
        guard ackAtNanoseconds.indices.contains(index), self.seq[index] == 0 else { return }
        ackAtNanoseconds[index] = max(elapsed, 1)
        self.seq[index] = seq
        sequencedAtNanoseconds[index] = stamp
    }

    public var acked: Int { seq.reduce(0) { $1 != 0 ? $0 + 1 : $0 } }
    public var maxSeq: UInt64 { seq.max() ?? 0 }
}

/// A subscriber saw the state reach `version` at `at` nanoseconds after the start; the store had
/// published it at `publishedAtNanoseconds` (wall clock, 0: unknown).
public struct Arrival: Sendable, Equatable {
    public var version: UInt64
    public var at: UInt64
    public var publishedAtNanoseconds: Int64

    public init(version: UInt64, at: UInt64, publishedAtNanoseconds: Int64 = 0) {
        self.version = version
        self.at = at
        self.publishedAtNanoseconds = publishedAtNanoseconds
    }
}

/// The figures of one run.
public struct TrialResult: Sendable {
    public var ack = LatencyHistogram()
    /// Dispatch (scheduled) → the state containing the action visible, over every subscriber.
    public var e2e = LatencyHistogram()
    /// Same-host breakdown of e2e from the nodes' wall-clock stamps: client → sequenced, sequenced →
    /// published by the store, published → visible in the subscriber.
    public var stages: [String: LatencyHistogram] = [:]
    public var sent = 0
    public var acked = 0
    public var nacked = 0
    /// What the dispatcher said to the first refused action.
    public var firstRefusal: String? = nil
    /// Acknowledged actions that some subscriber never saw (must be zero).
    public var lost = 0
    /// Acknowledged actions their store refused (REJECTED: its `reject` or a failed decode); the state
    /// stayed as it was. Sequenced and seen, so not lost, but not what a load test meant to measure.
    package var refusedByStore = 0
    /// The reason the store gave for the first of them, by seq.
    package var firstStoreRefusal: String? = nil
    /// Dispatches sent again (``TrialLog/resent``).
    public var resent = 0
    /// Acknowledged actions per second, from the start until the last one was visible everywhere.
    public var rateAchieved: Double = 0
    /// What the schedule asked for on average (``OpenLoopSchedule/meanRate``): the target's rate, or
    /// less with a ramp. A run holds its rate when ``rateAchieved`` comes close to this.
    public var rateScheduled: Double = 0

    public static let stageNames = ["sequence", "publish", "deliver"]
    /// The e2e latencies of each second of the run (by when the action was scheduled, after the warm-up),
    /// as the first subscriber saw them: the timeline the devtools page plots.
    package var timeline: [LatencyHistogram] = []

    public init() {}
}

public enum Accounting {
    /// Counts the acknowledged actions of `log` that a store refused, as its views heard (`refusals`:
    /// per view, seq → reason; a refusal seen by several views counts once).
    package static func countStoreRefusals(_ result: inout TrialResult, log: TrialLog, refusals: [[UInt64: String]]) {
        var all: [UInt64: String] = [:]
        for view in refusals { all.merge(view) { first, _ in first } }
        guard !all.isEmpty else { return }
        let refused = log.seq.filter { $0 != 0 && all[$0] != nil }
        result.refusedByStore = refused.count
        result.firstStoreRefusal = refused.min().flatMap { all[$0] }
    }

    /// Matches every acknowledged action with the first arrival, in each subscriber that must show it,
    /// of a version that contains it. Actions scheduled before `warmUp` nanoseconds count for loss but
    /// not for latency. With `apps`, subscriber `n` follows a store of app `apps.subscribers[n]` and
    /// must show exactly the actions whose kind is of that app (`apps.kinds[kind]`); a store's version
    /// also moves on heartbeats after other apps' actions, which would otherwise pass for arrivals.
    public static func evaluate(
        _ log: TrialLog, subscribers: [[Arrival]], apps: (subscribers: [String], kinds: [String])? = nil, warmUp: UInt64, startWall: Int64
    ) -> TrialResult {
        var result = TrialResult()
        result.sent = log.sent
        result.nacked = log.nacked
        result.resent = log.resent
        result.firstRefusal = log.firstRefusal
        let schedule = log.schedule
        result.rateScheduled = schedule.meanRate
        // Acknowledged actions in seq order; arrivals are in version order already.
        var bySeq: [(seq: UInt64, index: Int)] = []
        bySeq.reserveCapacity(log.seq.count)
        for (index, seq) in log.seq.enumerated() where seq != 0 { bySeq.append((seq, index)) }
        bySeq.sort { $0.seq < $1.seq }
        result.acked = bySeq.count
        for (index, at) in log.ackAtNanoseconds.enumerated() where at != 0 && schedule.offset(of: index) >= warmUp {
            result.ack.record(nanoseconds: at &- min(at, schedule.offset(of: index)))
        }
        var lostAnywhere = Set<Int>()
        var lastVisible: UInt64 = 0
        var stages = Dictionary(uniqueKeysWithValues: TrialResult.stageNames.map { ($0, LatencyHistogram()) })
        for (number, arrivals) in subscribers.enumerated() {
            var next = 0
            let follows = apps.map { apps in apps.subscribers.indices.contains(number) ? apps.subscribers[number] : "" }
            for (seq, index) in bySeq {
                if let follows, let apps, apps.kinds[Int(log.kind[index])] != follows { continue }
                while next < arrivals.count && arrivals[next].version < seq { next += 1 }
                guard next < arrivals.count else { lostAnywhere.insert(index); continue }
                let arrival = arrivals[next]
                lastVisible = max(lastVisible, arrival.at)
                let scheduled = schedule.offset(of: index)
                guard scheduled >= warmUp else { continue }
                result.e2e.record(nanoseconds: arrival.at &- min(arrival.at, scheduled))
                if number == 0 {
                    let second = Int(scheduled / 1_000_000_000)
                    while result.timeline.count <= second { result.timeline.append(LatencyHistogram()) }
                    result.timeline[second].record(nanoseconds: arrival.at &- min(arrival.at, scheduled))
                }
                // Stages from one subscriber: they describe the pipeline, not each copy of it.
                guard number == 0, log.sequencedAtNanoseconds[index] > 0, arrival.publishedAtNanoseconds > 0 else { continue }
                let sentWall = startWall + Int64(scheduled)
                let seenWall = startWall + Int64(arrival.at)
                stages["sequence", default: LatencyHistogram()].record(nanoseconds: UInt64(max(0, log.sequencedAtNanoseconds[index] - sentWall)))
                stages["publish", default: LatencyHistogram()].record(
                    nanoseconds: UInt64(max(0, arrival.publishedAtNanoseconds - log.sequencedAtNanoseconds[index])))
                stages["deliver", default: LatencyHistogram()].record(nanoseconds: UInt64(max(0, seenWall - arrival.publishedAtNanoseconds)))
            }
        }
        result.stages = stages.filter { $0.value.count > 0 }
        result.lost = lostAnywhere.count
        if subscribers.isEmpty { lastVisible = log.ackAtNanoseconds.max() ?? 0 }
        if lastVisible > 0 { result.rateAchieved = Double(result.acked) / (Double(lastVisible) / 1e9) }
        return result
    }
}

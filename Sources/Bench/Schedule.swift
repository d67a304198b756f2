/// When each action of an open-loop run is due: action `i` at `i / rate` seconds after the start,
/// whatever happened to the ones before it. Latency is measured from this scheduled instant, not from
/// when the action was actually sent, so a stall in the system under test (or in the sender) shows in
/// the figures instead of hiding them: the coordinated-omission correction.
public struct OpenLoopSchedule: Sendable, Equatable {
    public let rate: Double
    public let count: Int

    public init(rate: Double, count: Int) {
        precondition(rate > 0 && count >= 0)
        self.rate = rate
        self.count = count
    }

    public init(rate: Double, seconds: Double) {
        self.init(rate: rate, count: max(1, Int((rate * seconds).rounded())))
    }

    /// Nanoseconds from the start to when action `index` is due.
    public func offset(of index: Int) -> UInt64 {
        UInt64((Double(index) * 1e9 / rate).rounded())
    }

    /// How many actions are due `elapsed` nanoseconds after the start (at most `count`).
    public func dueCount(atElapsed elapsed: UInt64) -> Int {
        min(count, Int((Double(elapsed) * rate / 1e9).rounded(.down)) + 1)
    }

    /// The whole run's length in nanoseconds (when the last action is due).
    public var span: UInt64 { count == 0 ? 0 : offset(of: count - 1) }
}

/// When each action of an open-loop run is due: action `i` at `i / rate` seconds after the start,
/// whatever happened to the ones before it. Latency is measured from this scheduled instant, not from
/// when the action was actually sent, so a stall in the system under test (or in the sender) shows in
/// the figures instead of hiding them: the coordinated-omission correction.
public struct OpenLoopSchedule: Sendable, Equatable {
    public let rate: Double
    public let count: Int
    /// Seconds over which the rate climbs linearly from 0 to `rate` (0: full rate from the start).
    public let ramp: Double

    public init(rate: Double, count: Int, ramp: Double = 0) {
        precondition(rate > 0 && count >= 0 && ramp >= 0)
        self.rate = rate
        self.count = count
        self.ramp = ramp
    }

    /// A run of `seconds` (the ramp, if any, included) at `rate`.
    public init(rate: Double, seconds: Double, ramp: Double = 0) {
        let ramp = min(max(0, ramp), seconds)
        // Actions due in the ramp (half of what the full rate would send in it), then the rest.
        let due = rate * ramp / 2 + rate * (seconds - ramp)
        self.init(rate: rate, count: max(1, Int(due.rounded())), ramp: ramp)
    }

    /// Actions due during the ramp.
    var rampActions: Double { rate * ramp / 2 }

    /// Nanoseconds from the start to when action `index` is due.
    public func offset(of index: Int) -> UInt64 {
        guard ramp > 0 else { return UInt64((Double(index) * 1e9 / rate).rounded()) }
        // In the ramp, n(t) = rate·t²/(2·ramp), so action i is due at √(2·ramp·i/rate).
        let i = Double(index)
        let seconds = i < rampActions ? (2 * ramp * i / rate).squareRoot() : ramp + (i - rampActions) / rate
        return UInt64((seconds * 1e9).rounded())
    }

    /// How many actions are due `elapsed` nanoseconds after the start (at most `count`).
    public func dueCount(atElapsed elapsed: UInt64) -> Int {
        guard ramp > 0 else { return min(count, Int((Double(elapsed) * rate / 1e9).rounded(.down)) + 1) }
        let t = Double(elapsed) / 1e9
        let due = t < ramp ? rate * t * t / (2 * ramp) : rampActions + rate * (t - ramp)
        // The same rounding as offset(of:): action i is due once offset(of: i) has passed.
        var n = min(count, Int(due.rounded(.down)) + 1)
        while n < count && offset(of: n) <= elapsed { n += 1 }
        while n > 1 && offset(of: n - 1) > elapsed { n -= 1 }
        return n
    }

    /// The whole run's length in nanoseconds (when the last action is due).
    public var span: UInt64 { count == 0 ? 0 : offset(of: count - 1) }

    /// Actions per second over the whole run: `rate` without a ramp, less with one (a ramp of half
    /// the run sends three quarters of what the full rate would). What a run can achieve at best.
    public var meanRate: Double {
        let end = offset(of: count)
        return count == 0 || end == 0 ? rate : Double(count) / (Double(end) / 1e9)
    }
}

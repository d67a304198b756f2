#if canImport(Glibc)
    import Glibc
#endif

/// Clock readings used by nodes: wall time for action timestamps, monotonic time for timeouts.
public enum WallClock {
    /// Nanoseconds since the Unix epoch.
    public static func nowNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

public enum MonotonicClock {
    /// Nanoseconds from an arbitrary fixed point; never goes backwards.
    public static func nowNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    public static func nowMilliseconds() -> UInt64 { nowNanoseconds() / 1_000_000 }

    /// `now - earlier`, or 0 when `earlier` was stamped after `now` was read (a loop reads `now` once,
    /// then code in the same turn stamps something newer): never an overflow trap.
    public static func elapsed(since earlier: UInt64, now: UInt64) -> UInt64 { now > earlier ? now - earlier : 0 }
}

/// One reading of both clocks. Node cores are handed one with every event instead of reading a clock
/// themselves: time is an input, so a simulator can drive them with time of its own.
public struct NodeTime: Sendable, Equatable {
    /// Milliseconds on the monotonic clock: timeouts and intervals.
    public var milliseconds: UInt64
    /// Nanoseconds since the Unix epoch: timestamps in headers.
    public var wallNanoseconds: Int64

    public init(milliseconds: UInt64, wallNanoseconds: Int64) {
        self.milliseconds = milliseconds
        self.wallNanoseconds = wallNanoseconds
    }

    /// Both clocks, read now (the shells' clock; cores never call it).
    public static func now() -> NodeTime {
        NodeTime(milliseconds: MonotonicClock.nowMilliseconds(), wallNanoseconds: WallClock.nowNanoseconds())
    }

    /// Milliseconds from `earlier` to this reading, 0 if `earlier` is later (never an overflow trap).
    public func elapsed(since earlier: UInt64) -> UInt64 { MonotonicClock.elapsed(since: earlier, now: milliseconds) }
}

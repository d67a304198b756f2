import FluxCore

#if canImport(Glibc)
    import Glibc
#endif

/// Clock readings used by the shells: wall time for action timestamps, monotonic time for timeouts.
/// They live here, not in FluxCore, so the cores (which cannot import NodeSupport) cannot read them.
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

extension NodeTime {
    /// Both clocks, read now: the shells' clock, which the cores are handed and never call.
    public static func now() -> NodeTime {
        NodeTime(milliseconds: MonotonicClock.nowMilliseconds(), wallNanoseconds: WallClock.nowNanoseconds())
    }
}

import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// A timer on the monotonic clock as a descriptor, so a poll loop wakes at a precise instant
/// (zmq_poll's own timeout counts whole milliseconds). Owned by one thread.
public final class TimerFD {
    public let descriptor: Int32

    public init() throws(ZMQError) {
        let fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        guard fd >= 0 else { throw ZMQError(errno: errno, function: "timerfd_create") }
        descriptor = fd
    }

    deinit { _ = Glibc.close(descriptor) }

    /// Fires once when the monotonic clock (`clock_gettime(CLOCK_MONOTONIC)`) reaches `nanoseconds`.
    public func arm(atMonotonicNanoseconds nanoseconds: UInt64) {
        var spec = itimerspec()
        spec.it_value.tv_sec = time_t(nanoseconds / 1_000_000_000)
        spec.it_value.tv_nsec = Int(nanoseconds % 1_000_000_000)
        // An all-zero time disarms the timer; the instant 0 is long past, so fire at once instead.
        if nanoseconds == 0 { spec.it_value.tv_nsec = 1 }
        _ = timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    /// Fires at `nanoseconds`, then every `interval` nanoseconds after it, with no call per expiry
    /// (setting a timer costs a hypervisor exit on a VM; a periodic one is set once).
    public func arm(atMonotonicNanoseconds nanoseconds: UInt64, every interval: UInt64) {
        var spec = itimerspec()
        spec.it_value.tv_sec = time_t(nanoseconds / 1_000_000_000)
        spec.it_value.tv_nsec = Int(max(nanoseconds % 1_000_000_000, nanoseconds == 0 ? 1 : 0))
        spec.it_interval.tv_sec = time_t(interval / 1_000_000_000)
        spec.it_interval.tv_nsec = Int(interval % 1_000_000_000)
        _ = timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    /// Stops the timer: it does not fire until armed again.
    public func disarm() {
        var spec = itimerspec()
        _ = timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    public func drain() {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { Glibc.read(descriptor, $0.baseAddress, 8) }
    }

    /// Makes this thread's timed wake-ups (this timer's included) precise to about a microsecond.
    public static func tightenTimerSlack() { _ = CLinux_set_timer_slack_ns(1000) }
}

import CZMQ

#if canImport(Glibc)
    import Glibc
#endif

/// A Linux eventfd: any thread may `signal()` it; the owning thread polls its descriptor with
/// `zmq_poll` and `drain()`s it. This is how other threads wake a node's poll loop without touching its
/// sockets.
public final class EventFD: @unchecked Sendable {
    // @unchecked: the descriptor is immutable; write(2)/read(2) on an eventfd are atomic and thread safe.
    public let descriptor: Int32

    public init() throws(ZMQError) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw ZMQError(errno: czmq_errno(), function: "eventfd") }
        descriptor = fd
    }

    deinit { _ = Glibc.close(descriptor) }

    public func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(descriptor, $0.baseAddress, 8) }
    }

    public func drain() {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { Glibc.read(descriptor, $0.baseAddress, 8) }
    }
}

/// Asks the kernel to send `signal` to this process when its parent dies, so a node started by a
/// supervisor never outlives it (Linux only; a no-op elsewhere).
public func exitWithParent(signal: Int32 = SIGTERM) {
    _ = czmq_set_parent_death_signal(signal)
}

/// A one-shot timer on the monotonic clock as a descriptor, so a poll loop wakes at a precise instant
/// (zmq_poll's own timeout counts whole milliseconds). Owned by one thread.
public final class TimerFD {
    public let descriptor: Int32

    public init() throws(ZMQError) {
        let fd = czmq_timer_create()
        guard fd >= 0 else { throw ZMQError(errno: czmq_errno(), function: "timerfd_create") }
        descriptor = fd
    }

    deinit { _ = Glibc.close(descriptor) }

    /// Fires once when the monotonic clock (`clock_gettime(CLOCK_MONOTONIC)`) reaches `nanoseconds`.
    public func arm(atMonotonicNanoseconds nanoseconds: UInt64) {
        _ = czmq_timer_arm_at(descriptor, nanoseconds)
    }

    public func drain() {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { Glibc.read(descriptor, $0.baseAddress, 8) }
    }

    /// Makes this thread's timed wake-ups (this timer's included) precise to about a microsecond.
    public static func tightenTimerSlack() { _ = czmq_set_timer_slack_ns(1000) }
}

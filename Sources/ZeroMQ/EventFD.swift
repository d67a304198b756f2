import CLinux

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
        guard fd >= 0 else { throw ZMQError(errno: errno, function: "eventfd") }
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

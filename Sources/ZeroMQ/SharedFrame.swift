import CZMQ
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A frame's bytes handed to libzmq without a copy, to be sent to many peers: each send adds a
/// reference, which libzmq drops once the frame is written out, or once its peer's queue is dropped
/// (the peer left). The bytes are freed when the last reference goes, and the ``Ledger`` they were
/// made with counts them until then: what a node's queues hold for peers that do not read, across
/// all of them, is that count, never guessed.
public final class SharedFrame: @unchecked Sendable {
    /// Counts the bytes of the frames made with it that are still alive, from any thread (libzmq's
    /// I/O thread releases its references).
    public final class Ledger: Sendable {
        private let held = Atomic<Int>(0)
        public init() {}
        /// Bytes of frames alive now.
        public var bytes: Int { held.load(ordering: .acquiring) }
        fileprivate func add(_ count: Int) { held.add(count, ordering: .releasing) }
        fileprivate func remove(_ count: Int) {
            let left = held.subtract(count, ordering: .releasing).newValue
            precondition(left >= 0, "a shared frame's bytes were counted out twice")
        }
    }

    public let count: Int
    // @unchecked Sendable: the bytes are written once, in init, and only read afterwards (by libzmq,
    // from its I/O thread); they are freed once, in deinit, when no reference is left.
    let bytes: UnsafeMutableRawPointer
    /// Whether the bytes are pages of their own (a large frame), unmapped when freed.
    private let mapped: Bool
    private let ledger: Ledger

    /// Frames this large get pages of their own: unmapped when freed, their memory goes back to the
    /// system at once, where the heap would keep it for later.
    static let mappedFrom = 128 << 10

    /// A copy of `payload` (at least one byte), counted by `ledger` while it lives.
    public init(copying payload: [UInt8], ledger: Ledger) {
        precondition(!payload.isEmpty, "a shared frame holds bytes")
        var bytes: UnsafeMutableRawPointer? = nil
        if payload.count >= SharedFrame.mappedFrom,
            let pages = mmap(nil, payload.count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), pages != MAP_FAILED
        {
            bytes = pages
        }
        mapped = bytes != nil
        let target = bytes ?? UnsafeMutableRawPointer.allocate(byteCount: payload.count, alignment: 16)
        payload.withUnsafeBytes { source in
            // swift-format-ignore: NeverForceUnwrap
            // A non-empty array's bytes have an address.
            target.copyMemory(from: source.baseAddress!, byteCount: source.count)
        }
        self.bytes = target
        count = payload.count
        self.ledger = ledger
        ledger.add(count)
    }

    deinit {
        if mapped {
            munmap(bytes, count)
        } else {
            bytes.deallocate()
        }
        ledger.remove(count)
    }
}

/// libzmq's free function for a ``SharedFrame``: the hint is the reference the send took.
private func releaseSharedFrame(_ data: UnsafeMutableRawPointer?, _ hint: UnsafeMutableRawPointer?) {
    guard let hint else { return }
    Unmanaged<SharedFrame>.fromOpaque(hint).release()
}

extension Socket {
    /// Sends `frames`, then `shared` as the last frame without copying it: libzmq keeps a reference
    /// until the frame is written out or dropped. Returns false when `dontWait` is set and the queue
    /// is full (nothing is sent, and the reference is dropped at once).
    public func send(_ frames: [[UInt8]], shared: SharedFrame, dontWait: Bool = false) throws(ZMQError) -> Bool {
        if !frames.isEmpty {
            guard try send(frames, dontWait: dontWait, more: true) else { return false }
        }
        var msg = zmq_msg_t()
        let hint = Unmanaged.passRetained(shared).toOpaque()
        guard zmq_msg_init_data(&msg, shared.bytes, shared.count, releaseSharedFrame, hint) == 0 else {
            Unmanaged<SharedFrame>.fromOpaque(hint).release()
            throw ZMQError.last("zmq_msg_init_data")
        }
        let flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
        var rc: Int32
        repeat { rc = zmq_msg_send(&msg, handle, flags) } while rc < 0 && zmq_errno() == EINTR
        guard rc < 0 else { return true }
        let err = zmq_errno()
        // Not sent: closing the message drops libzmq's reference (the free function runs).
        zmq_msg_close(&msg)
        // libzmq queues a multipart message atomically: EAGAIN can only come on the first frame.
        if err == EAGAIN && frames.isEmpty { return false }
        throw ZMQError(errno: err, function: "zmq_msg_send")
    }
}

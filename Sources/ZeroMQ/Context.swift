import CZMQ

/// A libzmq context. libzmq contexts are thread safe, so one context is shared by every node thread
/// in a process (and must be, for `inproc://` endpoints to reach each other).
public final class Context: @unchecked Sendable {
    // @unchecked: zmq_ctx_* functions are documented thread safe; the handle is immutable after init.
    let handle: UnsafeMutableRawPointer

    public init(ioThreads: Int32 = 1) throws(ZMQError) {
        guard let h = zmq_ctx_new() else { throw ZMQError.last("zmq_ctx_new") }
        handle = h
        _ = zmq_ctx_set(h, ZMQ_IO_THREADS, ioThreads)
        // Never block a process's exit on undelivered messages by default.
        _ = zmq_ctx_set(h, ZMQ_BLOCKY, 0)
    }

    /// The process-wide shared context.
    public static let shared: Context = {
        do { return try Context() } catch { fatalError("cannot create the libzmq context: \(error)") }
    }()

    deinit { _ = zmq_ctx_term(handle) }

    /// Linux's `SCHED_BATCH` (sched.h).
    static let batchSchedulingPolicy: Int32 = 3

    /// The context's own threads (its I/O threads, and the reaper that closes sockets) run under
    /// `SCHED_BATCH`: a thread that wakes one (a node thread handing it a message to send, through its
    /// mailbox's eventfd) goes on until it waits itself, instead of being preempted at once. Only
    /// before the context's first socket, which starts those threads.
    package func runIOThreadsAsBatch() throws(ZMQError) {
        guard zmq_ctx_set(handle, ZMQ_THREAD_SCHED_POLICY, Self.batchSchedulingPolicy) == 0 else { throw ZMQError.last("zmq_ctx_set") }
    }

    /// The linked libzmq's version, e.g. (4, 3, 4).
    public static var libraryVersion: (major: Int32, minor: Int32, patch: Int32) {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (major, minor, patch)
    }
}

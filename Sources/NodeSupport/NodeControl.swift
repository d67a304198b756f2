import Foundation
import Synchronization
import ZeroMQ

/// How other threads talk to a node's poll-loop thread: a stop flag and a mailbox, both announced
/// through an eventfd that sits in the node's poll set. Nothing else crosses the thread boundary.
public final class NodeControl<Command: Sendable>: Sendable {
    public let wake: EventFD
    private let stopFlag = Atomic<Bool>(false)
    private let mailbox = Mutex<[Command]>([])

    public init() throws(ZMQError) { wake = try EventFD() }

    public var stopRequested: Bool { stopFlag.load(ordering: .acquiring) }

    public func requestStop() {
        stopFlag.store(true, ordering: .releasing)
        wake.signal()
    }

    public func post(_ command: Command) {
        mailbox.withLock { $0.append(command) }
        wake.signal()
    }

    /// Called by the node thread when the eventfd is readable.
    public func takeAll() -> [Command] {
        wake.drain()
        return mailbox.withLock { commands in
            defer { commands.removeAll(keepingCapacity: true) }
            return commands
        }
    }
}

/// A node's event loop: built and run on the node's own thread, which owns its sockets.
public protocol NodeLoop: AnyObject {
    /// Runs until the node is asked to stop.
    func run() throws
}

/// What every node is outside its loop, written once: a dedicated thread that is its event loop, the
/// mailbox other threads reach it through, and the latch that opens once its sockets are bound.
///
/// ``run()`` builds the loop on the node's thread with the closure it was made with (so the thread
/// owns its sockets), opens ``ready`` once it is built or with the error that stopped it, runs it, and
/// suspends until it returns. So the public API is async while the sockets stay on one thread and
/// nothing blocks the cooperative pool. Cancelling the calling task asks the loop to stop.
public final class NodeShell<Command: Sendable>: Sendable {
    public let control: NodeControl<Command>
    /// Opens once the node's sockets are bound (or with the error that stopped it).
    public let ready = ReadyLatch()
    private let threadName: String
    private let makeLoop: @Sendable (NodeControl<Command>) throws -> any NodeLoop

    /// A shell whose thread is called `threadName` and runs the loop `makeLoop` builds there.
    public init(threadName: String, makeLoop: @escaping @Sendable (NodeControl<Command>) throws -> any NodeLoop) throws {
        self.threadName = threadName
        self.makeLoop = makeLoop
        self.control = try NodeControl()
    }

    /// Runs the loop (built on the node's thread) until ``stop()`` or cancellation.
    public func run() async throws {
        let control = control, ready = ready, makeLoop = makeLoop
        @Sendable func runLoop() throws {
            let loop: any NodeLoop
            let slice: UInt64?
            do {
                slice = try NodeThreadSlice.slice()
                loop = try makeLoop(control)
            } catch {
                ready.open(error: "\(error)")
                throw error
            }
            // Asked for once the loop's sockets exist, so that libzmq's threads, started with the first
            // socket, keep the default slice rather than inherit this thread's.
            if let refused = NodeThreadSlice.ask(slice) { StandardOutput.error("zflux: \(refused)\n") }
            ready.open()
            try loop.run()
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                let thread = Thread {
                    // The loop is built, run and released inside `runLoop`, so its sockets are closed (and its
                    // ipc files removed) before the caller resumes and, in a node process, exits.
                    continuation.resume(with: Result { try runLoop() })
                }
                thread.name = threadName
                thread.stackSize = 4 << 20
                thread.start()
            }
        } onCancel: {
            control.requestStop()
        }
    }

    /// Asks the loop to stop; `run` returns once it has closed its sockets.
    public func stop() { control.requestStop() }
}

/// A node's public face (`DispatcherNode`, `StoreNode`, `ViewNode`): its configuration and the
/// ``NodeShell`` that runs its loop. What every node does with them (wait until it is ready, run,
/// stop) is written here once.
public protocol FluxNode: AnyObject, Sendable {
    associatedtype Configuration: Sendable
    associatedtype Command: Sendable
    /// What the node was started with.
    var configuration: Configuration { get }
    /// The node's thread, mailbox and ready latch, with the loop it builds there.
    var shell: NodeShell<Command> { get }
}

extension FluxNode {
    /// Opens once every socket is bound (or with the bind error).
    public var ready: ReadyLatch { shell.ready }

    /// Runs until ``stop()`` or cancellation.
    public func run() async throws { try await shell.run() }

    /// Asks the node to stop; ``run()`` returns once it has closed its sockets.
    public func stop() { shell.stop() }
}

/// A one-shot, thread-safe latch that async code can wait on (for "the node has bound its sockets").
public final class ReadyLatch: Sendable {
    private let state = Mutex<(done: Bool, error: String?, waiters: [CheckedContinuation<Void, Error>])>((false, nil, []))

    public init() {}

    public func open(error: String? = nil) {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Error>] in
            guard !s.done else { return [] }
            s.done = true
            s.error = error
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters {
            if let error { waiter.resume(throwing: NodeError(error)) } else { waiter.resume() }
        }
    }

    public func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            let result = state.withLock { s -> (Bool, String?) in
                if !s.done { s.waiters.append(continuation) }
                return (s.done, s.error)
            }
            if result.0 {
                if let error = result.1 { continuation.resume(throwing: NodeError(error)) } else { continuation.resume() }
            }
        }
    }
}

/// A node-level failure with a message a person can act on.
public struct NodeError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

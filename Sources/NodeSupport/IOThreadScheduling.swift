import Foundation
import ZeroMQ

/// Runs a node's libzmq threads (its I/O thread, and the reaper) under `SCHED_BATCH` when its
/// environment asks (``environmentKey``); the node's own threads keep the normal policy.
///
/// Each message a node thread sends wakes the I/O thread through an eventfd. On one CPU (a node
/// pinned by `cluster up --pin-cpus`) the woken I/O thread preempts the node thread at once, runs a
/// moment, and hands the CPU back: two task switches per send, and an action's hop through the
/// dispatcher sends two (the publish and the ACK). A batch thread does not preempt on its wake-up:
/// the node thread finishes its turn and waits, and the I/O thread then sends everything in one go.
/// The cost is where another busy process shares the CPU: the woken I/O thread waits for it to
/// yield or for the scheduler's tick. So it is asked for, not the default (BENCHMARKS.md, "Speed
/// round 4").
package enum IOThreadScheduling {
    /// `1`: the node's libzmq threads run under `SCHED_BATCH`.
    package static let environmentKey = "ZFLUX_IO_THREAD_BATCH"

    /// Applies the environment's choice to `context`, before its first socket. True when its threads
    /// will run as batch.
    @discardableResult
    package static func applyFromEnvironment(
        _ context: Context = .shared, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Bool {
        guard environment[environmentKey] == "1" else { return false }
        try context.runIOThreadsAsBatch()
        return true
    }
}

import CLinux
import Foundation

/// The time slice a node's own thread asks the scheduler for, when its environment asks
/// (``environmentKey``).
///
/// Each message the node thread sends wakes libzmq's I/O thread through an eventfd. With both on the
/// kernel's default slice, the woken I/O thread preempts the node thread at once (about once per action
/// at 2k/s, in the dispatcher and in the store), sends, and hands the CPU back; the node's second send
/// of a turn (the ACK after the publish) then wakes it again. Linux's EEVDF scheduler (6.6 and later)
/// runs the eligible task with the earliest deadline, a task's deadline is its slice ahead of it, and
/// from 6.12 a thread may ask for its slice (`sched_setattr`'s `sched_runtime`). A node thread with
/// a shorter slice than its I/O thread's keeps the CPU through its turn, and the I/O thread sends
/// everything it was handed in one go once the node thread waits. Each thread's share of the CPU stays
/// the same. The libzmq threads, started with the node's first socket, keep the default: the slice is
/// asked for once the node's sockets exist.
///
/// The ask sets the reset-on-fork flag: threads the node thread starts later (the journal's sync
/// threads, the Swift runtime's pool threads it wakes) begin with the default slice, not its own.
///
/// Measured with `zflux bench` (BENCHMARKS.md, "A shorter slice for the node's thread"): at 2k/s,
/// fsync `none`, a third fewer task switches in the dispatcher and a fifth fewer in the store, but no
/// gain in latency or CPU per action beyond the runs' spread once the bench's client and the floor ask
/// for the same slice; at 3k/s, fsync `batch`, more switches in the dispatcher (woken by its sync, it
/// preempts its I/O thread). So it is asked for, not the default.
package enum NodeThreadSlice {
    /// The slice in microseconds: `0` keeps the kernel's default.
    package static let environmentKey = "ZFLUX_NODE_SLICE_US"
    /// The slices Linux keeps a fair thread's within (it clamps any other), in microseconds; the variable
    /// takes only these.
    package static let accepted: ClosedRange<UInt64> = 100...100_000

    /// The slice to ask for, in nanoseconds, given the environment (the process's by default): nil
    /// (unset, empty or `0`) keeps the default. Throws on a value that is neither `0` nor in ``accepted``.
    package static func slice(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> UInt64? {
        guard let text = environment[environmentKey], !text.isEmpty else { return nil }
        // Digits only, as zflux-floor reads it ("+250" is not taken by either).
        guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let micros = UInt64(text),
            micros == 0 || accepted.contains(micros)
        else {
            throw NodeError(
                "\(environmentKey) must be 0 (the kernel's default slice) or a slice from \(accepted.lowerBound) to \(accepted.upperBound) µs, not '\(text)'"
            )
        }
        return micros == 0 ? nil : micros * 1_000
    }

    /// Whether this kernel tells a thread's slice, and so takes one asked for (Linux 6.12 and later).
    package static var kernelTakesSlices: Bool { CLinux_slice(0) > 0 }

    /// Asks for `nanoseconds` as the calling thread's slice: nil when it was taken (or none was
    /// asked), else why not. A kernel that refuses leaves the default: the node works the same.
    package static func ask(_ nanoseconds: UInt64?) -> String? {
        guard let nanoseconds else { return nil }
        guard CLinux_request_slice(0, nanoseconds) != 0 else { return nil }
        return
            "\(environmentKey): the kernel refused a \(nanoseconds / 1_000) µs slice (\(String(cString: strerror(errno)))); the node thread keeps the default"
    }
}

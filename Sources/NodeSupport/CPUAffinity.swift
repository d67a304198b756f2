import CLinux
import Foundation

/// Keeps every thread of a node on one CPU.
///
/// An action's hop through a node wakes two threads: libzmq's I/O thread, which reads the socket, and
/// the node's own loop, which it signals through an eventfd (and the same again on the way out). On a
/// VM, waking a thread on another CPU costs an inter-processor interrupt and a hypervisor exit; on the
/// same CPU it does not. Pinned, a node at 2k actions/s spent about a fifth less CPU per action and
/// its hop took about a fifth less time (BENCHMARKS.md, "Each node on one CPU"). `cluster up
/// --pin-cpus` gives each node a CPU of its own, in turn, through ``environmentKey``.
package enum CPUAffinity {
    /// The CPU a node keeps its threads on, set by its supervisor.
    package static let environmentKey = "ZFLUX_NODE_CPU"

    /// The CPUs this process may run on, in order.
    package static func allowed() -> [Int] {
        var cpus = [Int32](repeating: 0, count: 1024)
        let count = CLinux_allowed_cpus(&cpus, Int32(cpus.count))
        return cpus.prefix(Int(max(0, count))).map(Int.init)
    }

    /// The CPU the `index`th node of a cluster takes: the allowed CPUs in turn.
    package static func cpu(forNode index: Int, allowed: [Int] = allowed()) -> Int? {
        allowed.isEmpty ? nil : allowed[index % allowed.count]
    }

    /// Puts every thread of process `pid` (0: this one) on `cpu`. Threads they start later inherit it.
    package static func pin(process pid: Int32 = 0, to cpu: Int) throws {
        let tasks = pid == 0 ? "/proc/self/task" : "/proc/\(pid)/task"
        let threads = ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).compactMap { Int32($0) }
        guard !threads.isEmpty else { throw NodeError("cannot list the threads of \(pid == 0 ? "this process" : "process \(pid)") in \(tasks)") }
        // A thread that ended meanwhile is no longer there to pin (ESRCH).
        for thread in threads where CLinux_pin_thread(thread, Int32(cpu)) != 0 && errno != ESRCH {
            throw NodeError("cannot keep thread \(thread) on CPU \(cpu): \(String(cString: strerror(errno)))")
        }
    }

    /// Pins this process as its environment asks (``environmentKey``); the CPU, or nil when not asked.
    @discardableResult
    package static func applyFromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Int? {
        guard let text = environment[environmentKey], !text.isEmpty else { return nil }
        guard let cpu = Int(text), cpu >= 0 else { throw NodeError("\(environmentKey) must be a CPU number, not '\(text)'") }
        try pin(to: cpu)
        return cpu
    }
}

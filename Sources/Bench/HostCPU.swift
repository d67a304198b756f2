import Foundation

/// CPU seconds (user + system) a process has used so far, from /proc.
func cpuSeconds(pid: Int32) -> Double? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After the command name: state is field 3, utime 14, stime 15 (1-based), so 11 and 12 here.
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Context switches so far, voluntary (a thread waited: for a socket, a lock, the disk) and
/// involuntary (the scheduler took the CPU away) together: for this process from getrusage, which
/// also counts its threads that have ended; for another, summed over its live threads' /proc status.
/// A node's own threads (its loop, libzmq's I/O thread) live as long as it does; a worker thread of
/// the runtime that ends during a run takes its count with it, so a node's figure is a lower bound.
func contextSwitches(pid: Int32) -> Double? {
    if pid == getpid() {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return nil }
        return Double(usage.ru_nvcsw + usage.ru_nivcsw)
    }
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
    var total = 0.0
    for task in tasks {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
        for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
            total += line.split(separator: ":").last.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        }
    }
    return total
}

/// What the processes of a run used during it, by name: CPU seconds, and context switches, whose
/// count per action says how often the path wakes a thread (on a VM each wake-up costs ~10 µs).
struct ProcessUsage: Sendable {
    var cpuSeconds: [String: Double] = [:]
    var contextSwitches: [String: Double] = [:]

    /// Both counters of each process, now.
    static func now(_ pids: [String: Int32]) -> ProcessUsage {
        var usage = ProcessUsage()
        for (name, pid) in pids {
            usage.cpuSeconds[name] = Bench.cpuSeconds(pid: pid)
            usage.contextSwitches[name] = Bench.contextSwitches(pid: pid)
        }
        return usage
    }

    /// What each process used since `earlier` (a process missing from either reading is left out).
    func since(_ earlier: ProcessUsage) -> ProcessUsage {
        // Never below zero: a sum over live threads drops when one of them ends.
        func difference(_ now: [String: Double], _ before: [String: Double]) -> [String: Double] {
            now.reduce(into: [:]) { out, entry in
                if let old = before[entry.key] { out[entry.key] = max(0, entry.value - old) }
            }
        }
        return ProcessUsage(
            cpuSeconds: difference(cpuSeconds, earlier.cpuSeconds), contextSwitches: difference(contextSwitches, earlier.contextSwitches))
    }
}

/// The whole machine's CPU time so far, from the first line of /proc/stat, in clock ticks: all of it,
/// and the part the hypervisor gave to others while this guest wanted to run ("steal"). A VM whose CPU
/// quota runs out is paused until its next period; the pauses land in the bench's tails, so the report
/// says how much of the run's CPU time was stolen.
public struct HostCPU: Equatable, Sendable {
    public var total: UInt64
    public var steal: UInt64

    public init(total: UInt64, steal: UInt64) {
        self.total = total
        self.steal = steal
    }

    /// `cpu  user nice system idle iowait irq softirq steal guest guest_nice`: guest time is already
    /// counted in user, so the total is the first eight.
    public static func parse(_ stat: String) -> HostCPU? {
        guard let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard fields.count >= 8 else { return nil }
        return HostCPU(total: fields[0..<8].reduce(0, +), steal: fields[7])
    }

    public static func now() -> HostCPU? { (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)).flatMap(parse) }

    /// The share of the CPU time since `earlier` that was stolen, in percent (nil without a reading).
    public func stealPercent(since earlier: HostCPU?) -> Double? {
        guard let earlier, total > earlier.total, steal >= earlier.steal else { return nil }
        return Double(steal - earlier.steal) * 100 / Double(total - earlier.total)
    }
}

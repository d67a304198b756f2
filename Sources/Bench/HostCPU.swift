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

import Foundation

/// The slice in a thread's /proc `sched` file, in nanoseconds (its `se.slice` line: Linux 6.6 and later,
/// with the scheduler's debug fields), or nil where the file or the line is missing.
func slice(inSchedFile path: String) -> UInt64? {
    guard let sched = try? String(contentsOfFile: path, encoding: .utf8),
        let line = sched.split(separator: "\n").first(where: { $0.hasPrefix("se.slice") })
    else { return nil }
    return line.split(separator: ":").last.flatMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
}

/// The slice of each thread of `pid` by its name, in nanoseconds. A thread that ended meanwhile is
/// left out.
func threadSlices(_ pid: Int32) -> [(name: String, slice: UInt64)] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.compactMap { task in
        guard let value = slice(inSchedFile: "/proc/\(pid)/task/\(task)/sched"),
            let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)
        else { return nil }
        return (comm.trimmingCharacters(in: .newlines), value)
    }
}

/// Whether this kernel shows the threads' slices of `pid` (see ``threadSlices(_:)``).
func threadSlicesReadable(_ pid: Int32) -> Bool { !threadSlices(pid).isEmpty }

/// The calling thread's slice in nanoseconds, or nil where it is not shown.
func ownSlice() -> UInt64? { slice(inSchedFile: "/proc/thread-self/sched") }

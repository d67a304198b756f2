import FluxTesting
import Foundation
import NodeSupport
import Testing

/// ZFLUX_IO_THREAD_BATCH: the nodes' libzmq threads under `SCHED_BATCH`, their own threads not.
extension SupervisorTests {
    /// Linux's scheduling policies, as /proc reports them.
    static let normalPolicy = 0
    static let batchPolicy = 3

    /// The scheduling policy of each thread of `pid` by its name (field 41 of /proc/PID/task/TID/stat).
    static func schedulingPolicies(_ pid: Int32) -> [(name: String, policy: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { task in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { return nil }
            // Fields 3 on follow the name, which may hold spaces and parentheses.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 38, let policy = Int(fields[38]) else { return nil }
            return (String(stat[stat.index(after: open)..<close]), policy)
        }
    }

    @Test(
        "with ZFLUX_IO_THREAD_BATCH=1 the dispatcher's and the store's libzmq threads (I/O, reaper) run under SCHED_BATCH and the nodes' own threads do not; without it none does",
        arguments: [true, false])
    func ioThreadsAsBatch(asked: Bool) throws {
        let cluster = try ClusterProcess(transport: "ipc", environment: [IOThreadScheduling.environmentKey: asked ? "1" : ""])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        #expect(cluster.nodePids.count >= 2, "a dispatcher and a store: \(cluster.nodePids)")
        for (name, pid) in cluster.nodePids {
            let threads = Self.schedulingPolicies(pid)
            // libzmq's own threads: the I/O thread, and the reaper that closes sockets.
            let libzmq = threads.filter { $0.name.hasPrefix("ZMQbg/") }
            #expect(libzmq.contains { $0.name.hasPrefix("ZMQbg/IO") }, "\(name) has a libzmq I/O thread: \(threads)")
            #expect(libzmq.allSatisfy { $0.policy == (asked ? Self.batchPolicy : Self.normalPolicy) }, "\(name): \(threads)")
            #expect(threads.filter { !$0.name.hasPrefix("ZMQbg/") }.allSatisfy { $0.policy == Self.normalPolicy }, "\(name): \(threads)")
        }
        // The nodes work so: an action goes through the dispatcher to the store.
        let dispatched = try cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":3}"#, "--wait"])
        #expect(dispatched.status == 0, "\(dispatched)")
    }
}

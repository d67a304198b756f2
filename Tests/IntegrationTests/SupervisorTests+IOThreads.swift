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

/// ZFLUX_NODE_SLICE_US: a node's own thread asks for a shorter slice than its libzmq threads'.
extension SupervisorTests {
    /// The slice of each thread of `pid` by its name, in nanoseconds (`se.slice` in /proc/PID/task/TID/sched).
    static func slices(_ pid: Int32) -> [(name: String, slice: UInt64)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { task in
            guard let sched = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/sched", encoding: .utf8),
                let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8),
                let line = sched.split(separator: "\n").first(where: { $0.hasPrefix("se.slice") }),
                let value = line.split(separator: ":").last.flatMap({ UInt64($0.trimmingCharacters(in: .whitespaces)) })
            else { return nil }
            return (comm.trimmingCharacters(in: .newlines), value)
        }
    }

    @Test(
        "with ZFLUX_NODE_SLICE_US=250 the dispatcher's and the store's own thread asks for a 250 µs slice and their libzmq threads keep the default; unset or 0, every thread keeps it",
        arguments: [nil, "0", "250"] as [String?])
    func nodeThreadSlice(asked: String?) throws {
        var environment: [String: String] = [NodeThreadSlice.environmentKey: ""]
        if let asked { environment[NodeThreadSlice.environmentKey] = asked }
        let cluster = try ClusterProcess(transport: "ipc", environment: environment)
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        #expect(cluster.nodePids.count >= 2, "a dispatcher and a store: \(cluster.nodePids)")
        let expected = try NodeThreadSlice.slice(environment: environment)
        for (name, pid) in cluster.nodePids {
            let threads = Self.slices(pid)
            let io = try #require(threads.first { $0.name.hasPrefix("ZMQbg/IO") }, "\(name) has a libzmq I/O thread: \(threads)")
            #expect(threads.filter { $0.name.hasPrefix("ZMQbg/") }.allSatisfy { $0.slice == io.slice }, "\(name): \(threads)")
            if let expected, NodeThreadSlice.kernelTakesSlices {
                #expect(expected < io.slice, "\(name): 250 µs is shorter than the default \(io.slice)")
                #expect(threads.contains { $0.slice == expected && !$0.name.hasPrefix("ZMQbg/") }, "\(name) asks for \(expected): \(threads)")
            } else {
                #expect(threads.allSatisfy { $0.slice == io.slice }, "\(name) keeps the default everywhere: \(threads)")
            }
        }
        let dispatched = try cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":3}"#, "--wait"])
        #expect(dispatched.status == 0, "\(dispatched)")
    }

    @Test("ZFLUX_NODE_SLICE_US: unset, empty or 0 keeps the default; 100…100000 µs as given; anything else refused")
    func nodeThreadSliceRule() throws {
        let key = NodeThreadSlice.environmentKey
        #expect(try NodeThreadSlice.slice(environment: [:]) == nil)
        #expect(try NodeThreadSlice.slice(environment: [key: ""]) == nil)
        #expect(try NodeThreadSlice.slice(environment: [key: "0"]) == nil)
        #expect(try NodeThreadSlice.slice(environment: [key: "100"]) == 100_000)
        #expect(try NodeThreadSlice.slice(environment: [key: "100000"]) == 100_000_000)
        for bad in ["99", "100001", "-5", "1ms", " 200"] {
            #expect(throws: NodeError.self, "\(bad)") { try NodeThreadSlice.slice(environment: [key: bad]) }
        }
    }
}

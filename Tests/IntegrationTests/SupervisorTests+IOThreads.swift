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
    @Test(
        "with ZFLUX_NODE_SLICE_US=250 the dispatcher's and the store's node thread alone asks for a 250 µs slice, their libzmq threads keeping theirs; unset or 0, no thread asks",
        .enabled(if: threadSlicesReadable(getpid()), "this kernel does not show a thread's slice (se.slice)"),
        arguments: [nil, "0", "250"] as [String?])
    func nodeThreadSlice(asked: String?) throws {
        let environment = asked.map { [NodeThreadSlice.environmentKey: $0] } ?? [:]
        let cluster = try ClusterProcess(transport: "ipc", environment: environment)
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        #expect(cluster.nodePids.count >= 2, "a dispatcher and a store: \(cluster.nodePids)")
        let expected = try NodeThreadSlice.slice(environment: environment)
        for (name, pid) in cluster.nodePids {
            let threads = threadSlices(pid)
            let io = try #require(threads.first { $0.name.hasPrefix("ZMQbg/IO") }, "\(name) has a libzmq I/O thread: \(threads)")
            #expect(threads.filter { $0.name.hasPrefix("ZMQbg/") }.allSatisfy { $0.slice == io.slice }, "\(name): \(threads)")
            if let expected, NodeThreadSlice.kernelTakesSlices {
                #expect(expected < io.slice, "\(name): 250 µs is shorter than the I/O thread's \(io.slice)")
                // One thread: those the node thread starts after asking begin with the default (reset on fork).
                #expect(threads.filter { $0.slice == expected }.count == 1, "\(name) asks for \(expected) on its node thread alone: \(threads)")
            } else {
                #expect(threads.allSatisfy { $0.slice == io.slice }, "\(name) keeps the slice it started with everywhere: \(threads)")
            }
        }
        let dispatched = try cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":3}"#, "--wait"])
        #expect(dispatched.status == 0, "\(dispatched)")
    }

    @Test(
        "a thread the node thread starts after asking for its slice begins with the default, not the node's (the journal's sync threads, the runtime's pool)",
        .enabled(if: NodeThreadSlice.kernelTakesSlices && ownSlice() != nil, "this kernel takes or shows no slice (before Linux 6.12)"))
    func nodeThreadSliceNotInherited() throws {
        let seen = Locked<(asked: UInt64?, child: UInt64?)?>(nil)
        let asker = Thread {
            let refused = NodeThreadSlice.ask(250_000)
            let asked = ownSlice()
            let child = Thread { seen.withLock { $0 = (refused == nil ? asked : nil, ownSlice()) } }
            child.start()
        }
        asker.start()
        let started = ContinuousClock.now
        while seen.withLock({ $0 }) == nil && ContinuousClock.now - started < .seconds(30) { usleep(10_000) }
        let slices = try #require(seen.withLock { $0 }, "the threads did not run")
        #expect(slices.asked == 250_000, "the asking thread has its slice: \(slices)")
        #expect(slices.child != nil && slices.child != 250_000, "its child begins with the default: \(slices)")
    }

    @Test("a ZFLUX_NODE_SLICE_US out of 100…100000 stops the dispatcher at its start, and cluster up says why")
    func nodeThreadSliceRefused() throws {
        let runDir = try Self.runDirectory("zf-slice")
        defer { try? FileManager.default.removeItem(atPath: runDir) }
        let up = try runProgram(
            zfluxBinary, ["cluster", "up", "--run-dir", runDir], timeout: .seconds(60), environment: [NodeThreadSlice.environmentKey: "5"])
        #expect(up.status != 0, "\(up)")
        #expect(
            up.stderr.contains("ZFLUX_NODE_SLICE_US must be 0 (the kernel's default slice) or a slice from 100 to 100000 µs, not '5'"), "\(up.stderr)"
        )
    }

    @Test("ZFLUX_NODE_SLICE_US: unset, empty or 0 keeps the default; 100…100000 µs as given, in digits only; anything else refused")
    func nodeThreadSliceRule() throws {
        let key = NodeThreadSlice.environmentKey
        #expect(try NodeThreadSlice.slice(environment: [:]) == nil)
        #expect(try NodeThreadSlice.slice(environment: [key: ""]) == nil)
        #expect(try NodeThreadSlice.slice(environment: [key: "0"]) == nil)
        #expect(try NodeThreadSlice.slice(environment: [key: "100"]) == 100_000)
        #expect(try NodeThreadSlice.slice(environment: [key: "100000"]) == 100_000_000)
        for bad in ["99", "100001", "-5", "+250", "1ms", " 200", "٢٥٠"] {
            #expect(throws: NodeError.self, "\(bad)") { try NodeThreadSlice.slice(environment: [key: bad]) }
        }
    }
}

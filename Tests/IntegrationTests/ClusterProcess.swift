import FluxCore
import Foundation
import NodeSupport
import Spawn
import Testing

/// A real `zflux cluster up` in a fresh run directory. `stop()` shuts it down and checks that no
/// process and no socket file is left; the run directory is removed whatever happens.
final class ClusterProcess {
    let runDir: String
    let transport: String
    let process: ChildProcess
    private(set) var topology: Topology?
    private(set) var nodePids: [String: Int32] = [:]
    /// Each recorded pid's start time: `stop()` waits for that process, not whatever has its pid now.
    private var nodeStarts: [String: UInt64] = [:]
    private var stopped = false

    init(transport: String, runDir existing: String? = nil, extraArguments: [String] = [], environment: [String: String] = [:]) throws {
        self.transport = transport
        if let existing {
            runDir = existing
            try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: true)
        } else {
            // Short paths: ipc socket paths must fit in 107 bytes.
            var template = Array("/tmp/zf-XXXXXX".utf8CString)
            guard let dir = mkdtemp(&template) else { throw NodeError("mkdtemp failed") }
            runDir = String(cString: dir)
        }
        var arguments = ["cluster", "up", "--run-dir", runDir, "--supervisor-pid", String(getpid()), "--log-level", "notice"]
        // The default cluster binds 3 dispatcher ports and 2 per store; reserve room for more.
        if transport == "tcp" { arguments += ["--transport", "tcp", "--base-port", String(try freePortRange(count: 32))] }
        let log = runDir + "/cluster-up.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        nodePids = [:]
        process = try ChildProcess(
            executable: zfluxBinary, arguments: arguments + extraArguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new }, output: .discarded,
            errors: .appended(to: log))
    }

    /// Waits (bounded) until every node answers a status request.
    func waitUntilReady(timeout: Duration = .seconds(30)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                throw NodeError("cluster up ended with \(process.termination.map { "\($0)" } ?? "?"): \(logs())")
            }
            if topology == nil { topology = try? Topology.load(runDirectory: runDir) }
            if let topology {
                let endpoints = [topology.dispatcher.intake] + topology.stores.map(\.snapshot)
                // A CURVE cluster answers only clients with keys: ask through `zflux status`, which loads
                // the cluster's client key, instead of giving this whole test process keys.
                // A pair's intake is a list of both dispatchers: `zflux status` finds the one leading.
                let answered =
                    topology.security == nil && topology.ha == nil
                    ? endpoints.allSatisfy { nodeIsReady(endpoint: $0) }
                    : (try? self.zflux(["status"]))?.status == 0
                // The supervisor's own word that start-up is over: a node dying before it stops the cluster.
                let supervisorReady =
                    (try? String(contentsOfFile: runDir + "/cluster-up.log", encoding: .utf8))?
                    .contains("cluster up in") == true
                if answered && supervisorReady {
                    nodePids = readPids()
                    nodeStarts = nodePids.compactMapValues(processStartTime)
                    if nodePids.count == (topology.ha?.dispatchers.count ?? 1) + topology.stores.count { return }
                }
            }
            usleep(50_000)
        }
        throw NodeError("the cluster did not become ready within \(timeout): \(logs())")
    }

    /// The node's pid now (it changes when the supervisor restarts the node).
    func currentPid(_ name: String) -> Int32? { readPids()[name] }

    private func readPids() -> [String: Int32] {
        let dir = RunDirectory(runDir).pidDirectory
        var pids: [String: Int32] = [:]
        for file in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            if let text = try? String(contentsOfFile: dir + "/" + file, encoding: .utf8), let pid = Int32(text) {
                pids[String(file.dropLast(4))] = pid
            }
        }
        return pids
    }

    func zflux(_ arguments: [String], timeout: Duration = .seconds(30), environment: [String: String] = [:]) throws -> CommandResult {
        try IntegrationTests.zflux(arguments + ["--run-dir", runDir], timeout: timeout, environment: environment)
    }

    /// Every log the cluster wrote, for failure messages.
    func logs() -> String {
        var text = ""
        let logs = RunDirectory(runDir).logDirectory
        let files = [runDir + "/cluster-up.log"] + ((try? FileManager.default.contentsOfDirectory(atPath: logs)) ?? []).map { logs + "/" + $0 }
        for file in files {
            text += "\n== \(file)\n" + ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "")
        }
        return text
    }

    /// The pids of every node that ran, including those the supervisor restarted.
    func refreshPids() {
        for (name, pid) in readPids() where nodePids[name] != pid {
            nodePids[name + "#\(pid)"] = pid
            nodeStarts[name + "#\(pid)"] = processStartTime(pid)
        }
    }

    /// SIGTERM, then checks the supervisor exited 0, every node is gone and no socket file is left.
    func stop(keepRunDirectory: Bool = false, expectCleanExit: Bool = true) {
        guard !stopped else { return }
        stopped = true
        defer { if !keepRunDirectory { try? FileManager.default.removeItem(atPath: runDir) } }
        refreshPids()
        if !process.stop(grace: .seconds(20)) { Issue.record("cluster up ignored SIGTERM for 20 s: \(logs().suffix(3000))") }
        if expectCleanExit {
            #expect(process.termination == .exited(0), "cluster up exit: \(logs())")
        }
        for (name, pid) in nodePids {
            #expect(waitUntilGone(pid, startedAt: nodeStarts[name]), "\(name) (pid \(pid)) outlived the cluster")
        }
        let sockets = ((try? FileManager.default.contentsOfDirectory(atPath: runDir)) ?? []).filter { $0.hasSuffix(".sock") }
        #expect(sockets.isEmpty, "socket files left behind: \(sockets)")
    }

    /// kill -9 of the supervisor: nothing of it gets to clean up; the nodes must go on their own.
    func killSupervisorOutright() {
        stopped = true
        kill(process.pid, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// True once `pid` no longer exists (bounded wait). Zombies of other parents count as gone, and so
/// does a process that started at another time than `startedAt`: with pid_max at 32768 a make test
/// (or a build beside it) reuses pids within minutes, and the pid may by now be someone else's.
func waitUntilGone(_ pid: Int32, startedAt: UInt64? = nil, timeout: Duration = .seconds(30)) -> Bool {
    let start = startedAt ?? processStartTime(pid)
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if kill(pid, 0) != 0 { return true }
        guard let stat = processStat(pid) else { return true }
        if stat.state == "Z" || stat.start != start { return true }
        usleep(10_000)
    }
    return false
}

/// The state letter and start time (clock ticks after boot) of `pid`, from /proc/PID/stat.
private func processStat(_ pid: Int32) -> (state: Substring, start: UInt64)? {
    // The command name (field 2) may hold spaces and parentheses: the fields after its last ')' start at 3.
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let fields = text.split(separator: ")").last?.split(separator: " "), fields.count > 19,
        let start = UInt64(fields[19])  // field 22, starttime
    else { return nil }
    return (fields[0], start)
}

/// When `pid` started, in clock ticks after boot; nil once it is gone. A pid names the same process
/// only as long as this stays the same.
func processStartTime(_ pid: Int32) -> UInt64? { processStat(pid)?.start }

/// Sends `signal` to `pid` only while it is a zflux process (its executable is the binary under
/// test), never to whatever took the pid of a node that is already gone. True if it was sent.
@discardableResult
func signalNode(_ pid: Int32, _ signal: Int32) -> Bool {
    guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"),
        URL(fileURLWithPath: executable).lastPathComponent == URL(fileURLWithPath: zfluxBinary).lastPathComponent
    else { return false }
    return kill(pid, signal) == 0
}

/// A base port with `count` consecutive free tcp ports on 127.0.0.1, below the kernel's ephemeral range:
/// inside it, the cluster's own outgoing connections could take a port before a node binds it.
///
/// The ports are free when it looks, but nothing binds them until the cluster starts, so two tests
/// running at once (in this process, or in the other `swift test` process CI runs beside it) could be
/// handed overlapping ranges: a store then failed to bind "Address already in use". So the space is
/// cut into blocks of ``portBlockSize``, and a range is the start of a block this process holds: an
/// exclusive `flock` on a file per block, kept until the process ends, which no other test process can
/// take meanwhile and this one never hands out twice.
func freePortRange(count: Int) throws -> Int {
    precondition(count <= portBlockSize, "a range fits in one block of \(portBlockSize) ports")
    let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
        .split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
    let ephemeralStart = range?.first ?? 32_768
    let blocks = (ephemeralStart - 10_000) / portBlockSize
    try FileManager.default.createDirectory(atPath: portBlockDirectory, withIntermediateDirectories: true)
    for _ in 0..<200 {
        let block = Int.random(in: 0..<blocks)
        let base = 10_000 + block * portBlockSize
        guard (base..<base + count).allSatisfy(isPortFree) else { continue }
        let fd = open(portBlockDirectory + "/block-\(block)", O_CREAT | O_RDWR | O_CLOEXEC, 0o666)
        guard fd >= 0 else { continue }
        // Held (the descriptor stays open) until the process ends; taken by another test process, or
        // by this one already (flock on a second open file description conflicts too): another block.
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            continue
        }
        return base
    }
    throw NodeError("no free tcp port range found")
}

/// How many ports a block of ``freePortRange(count:)`` spans.
let portBlockSize = 64
/// Where the test processes' lock files for their port blocks are.
let portBlockDirectory = NSTemporaryDirectory() + "zflux-test-ports"

private func isPortFree(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// Runs blocking work on a thread of its own (never on the cooperative pool) and awaits it. The
/// thread runs it inside the calling task (a task executor of one thread), so what it records with
/// `#expect` is still the test's: a plain thread has none of the task's context, and its issues were
/// reported as «unknown».
func onThread<T: Sendable>(_ body: @Sendable () throws -> T) async throws -> T {
    let executor = OneThreadExecutor()
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor) { try body() }
}

/// A task executor that runs every job on one thread of its own, until ``finish()``.
final class OneThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the queue is only touched under `condition`'s lock.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    init() {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty && !finished { condition.wait() }
                if jobs.isEmpty && finished {
                    condition.unlock()
                    return
                }
                let job = jobs.removeFirst()
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
        thread.name = "zflux-test-body"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        jobs.append(unowned)
        condition.signal()
        condition.unlock()
    }

    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }
}

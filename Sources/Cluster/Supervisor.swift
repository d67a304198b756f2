import FluxCore
import Foundation
import NodeSupport
import Spawn
import Synchronization

/// Starts every node of a topology as its own `zflux` process, watches them, and tears them all
/// down (SIGTERM to all, then SIGKILL after one shared grace period) when asked or when one dies.
public final class Supervisor: Sendable {
    struct Child: Sendable {
        let name: String
        let command: [String]
        let process: ChildProcess
    }

    /// OTP's restart intensity: more than `maxRestarts` crashes within `window` stops the cluster.
    /// The deaths of stores on one action count once, however many replicas die on it and as long
    /// as each dies on it no more than the quarantine needs (``restartDelay(for:diedApplying:)``).
    public struct RestartPolicy: Sendable {
        public var maxRestarts = Settings.Restart.maxRestarts.fallback
        public var window: Duration = .seconds(Settings.Restart.windowS.fallback)
        public var initialBackoff: Duration = .milliseconds(100)
        public var maxBackoff: Duration = .seconds(5)
        public init() {}

        /// The policy of a cluster's `[restart]` (nil: the keys' defaults).
        package init(_ configured: Topology.RestartPolicy?) {
            if let configured {
                maxRestarts = configured.maxRestarts
                window = .seconds(configured.windowSeconds)
            }
        }
    }

    public enum Event: Sendable {
        case childExited(name: String, termination: ChildProcess.Termination)
        case signal(Int32)
    }

    public let topology: Topology
    /// How the supervisor's readiness probes connect (the cluster's client key; config checks loaded it).
    let security: Security.Settings?
    public let runDirectory: RunDirectory
    let logLevel: String
    /// The `zflux` binary the nodes run as (this process's own, by default).
    let executable: URL
    private let children = Mutex<[Child]>([])
    public let restartPolicy: RestartPolicy
    /// When each restart happened, for the intensity limit, and how many each node had; and the
    /// actions stores died applying, with when the first death on each counted.
    private let restarts = Mutex<(times: [ContinuousClock.Instant], perNode: [String: Int], actions: [UInt64: ContinuousClock.Instant])>(
        ([], [:], [:]))
    private let stopping = Atomic<Bool>(false)
    /// A signal came (``forward(signal:)``).
    private let signalled = Atomic<Bool>(false)
    /// Set once this supervisor owns the run directory's files, so only then does it clean them up.
    private let ownsRunDirectory = Atomic<Bool>(false)
    public let events: AsyncStream<Event>
    /// The CPU each node keeps its threads on, by name (empty: not pinned).
    package let cpus: [String: Int]
    private let continuation: AsyncStream<Event>.Continuation

    /// With `pinCPUs`, each node keeps its threads on one CPU (``CPUAffinity``): the dispatcher the
    /// first allowed CPU, each store the next in turn, the same one across restarts.
    public init(
        topology: Topology, runDirectory: String, logLevel: String, restartPolicy: RestartPolicy = RestartPolicy(),
        executable: URL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), pinCPUs: Bool = false
    ) {
        var cpus: [String: Int] = [:]
        if pinCPUs {
            let allowed = CPUAffinity.allowed()
            for (index, node) in Supervisor.nodes(of: topology).enumerated() { cpus[node.name] = CPUAffinity.cpu(forNode: index, allowed: allowed) }
        }
        self.cpus = cpus
        self.topology = topology
        self.executable = executable
        self.security = try? topology.clientSecurity()
        self.restartPolicy = restartPolicy
        self.runDirectory = RunDirectory(runDirectory)
        self.logLevel = logLevel
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
    }

    public var logDirectory: String { runDirectory.logDirectory }

    /// Prepares the run directory and starts every node.
    public func start() throws {
        let fm = FileManager.default
        let path = runDirectory.path
        // Also for a directory that existed: the ipc socket files inside are reachable only by this user.
        do { try runDirectory.makePrivate() } catch let error as NodeError { throw ClusterError(error.message) }
        try refuseIfRunning()
        ownsRunDirectory.store(true, ordering: .releasing)
        try fm.createDirectory(atPath: runDirectory.logDirectory, withIntermediateDirectories: true)
        try fm.createDirectory(atPath: runDirectory.pidDirectory, withIntermediateDirectories: true)
        // Socket files left by a cluster that was killed outright would make binds fail.
        for path in topology.ipcPaths { try? fm.removeItem(atPath: path) }
        try topology.write(runDirectory: path)
        try String(getpid()).write(toFile: runDirectory.supervisorPidFile, atomically: true, encoding: .utf8)

        for node in Supervisor.nodes(of: topology) { try spawn(name: node.name, node.command) }
    }

    /// Every node of `topology`, in the order they start: each node's name (its log's and pid file's)
    /// and the command that runs it. A dispatcher pair's members each start as a standby; the one that
    /// wins the lease in etcd leads.
    static func nodes(of topology: Topology) -> [(name: String, command: [String])] {
        let dispatchers =
            topology.ha.map { pair in pair.dispatchers.map { ("dispatcher-\($0.name)", ["dispatcher", "--node", $0.name]) } }
            ?? [("dispatcher", ["dispatcher"])]
        return dispatchers + topology.stores.map { ("store-\($0.name)", ["store", $0.name]) }
    }

    private func refuseIfRunning() throws { try Supervisor.refuseIfRunning(in: runDirectory) }

    /// Throws if another supervisor, alive, runs a cluster in `runDirectory`: before anything is
    /// started for a new one (a pair's private etcd included).
    package static func refuseIfRunning(in runDirectory: RunDirectory) throws {
        guard let text = try? String(contentsOfFile: runDirectory.supervisorPidFile, encoding: .utf8), let pid = Int32(text) else { return }
        if pid != getpid() && kill(pid, 0) == 0 {
            throw ClusterError("a cluster is already running in \(runDirectory.path) (supervisor pid \(pid)); stop it or pass another --run-dir")
        }
    }

    private func spawn(name: String, _ command: [String]) throws {
        if isStopping { return }
        let arguments = command + ["--run-dir", runDirectory.path, "--supervisor-pid", String(getpid()), "--log-level", logLevel]
        let continuation = continuation
        var environment = Self.nodeEnvironment(ProcessInfo.processInfo.environment)
        environment[CPUAffinity.environmentKey] = cpus[name].map(String.init)
        // The log is appended to across restarts: the log of the run that died (its crash report) must survive.
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable: executable.path, arguments: arguments, environment: environment,
                output: .appended(to: runDirectory.log(of: name))
            ) { termination in
                continuation.yield(.childExited(name: name, termination: termination))
            }
        } catch {
            throw ClusterError(error.message)
        }
        try String(process.pid).write(toFile: runDirectory.pidFile(of: name), atomically: true, encoding: .utf8)
        children.withLock { children in
            let child = Child(name: name, command: command, process: process)
            if let index = children.firstIndex(where: { $0.name == name }) { children[index] = child } else { children.append(child) }
        }
    }

    /// The runtime's crash report for a supervised node: the crashed thread only, unsymbolicated, with
    /// the images its frames are in. A crashed process lives until its report is written, and a full
    /// one (every thread, symbols, inline frames and source lines looked up in a debug binary's DWARF)
    /// took 3 to 9 s: that long without the node before its restart could even begin. This one takes a
    /// tenth of a second and keeps what a post-mortem needs: the runtime's own message (a failed
    /// precondition's text and line), the crashed thread's addresses and each image's load address and
    /// build id, which `addr2line -f -C -e BINARY ADDRESS-MINUS-LOAD-ADDRESS` turns into lines.
    /// A `SWIFT_BACKTRACE` of the supervisor's own environment (`preset=full`, say) wins.
    package static let nodeBacktrace = "enable=yes,interactive=no,threads=crashed,registers=none,images=mentioned,symbolicate=off"

    package static func nodeEnvironment(_ environment: [String: String]) -> [String: String] {
        var environment = environment
        if environment["SWIFT_BACKTRACE"] == nil { environment["SWIFT_BACKTRACE"] = nodeBacktrace }
        return environment
    }

    public func forward(signal: Int32) {
        // Also seen by a start still waiting for its nodes (``waitUntilReady(report:)``), before the
        // event loop reads the stream.
        signalled.store(true, ordering: .releasing)
        continuation.yield(.signal(signal))
    }

    /// Decides what to do about a node that died: nil when the restart intensity is exceeded (the
    /// cluster must stop), otherwise the backoff to wait before starting it again.
    ///
    /// A store that died applying an action (`diedApplying`, from its crash marker) dies on it again
    /// when it replays it, until it has died ``Defaults/crashesBeforeQuarantine`` times and asks for it
    /// to be quarantined; every replica of the app does the same. The first such death on an action
    /// counts against the intensity; the others, up to that many per store, do not: a poison action
    /// costs one restart whatever the replicas (with three, six deaths passed the default five and
    /// stopped the cluster). A store that keeps dying on it past that (the quarantine did not come)
    /// counts every time again.
    public func restartDelay(for name: String, diedApplying death: (seq: UInt64, inARow: Int)? = nil) -> Duration? {
        let now = ContinuousClock.now
        return restarts.withLock { r -> Duration? in
            r.times = r.times.filter { now - $0 < restartPolicy.window }
            r.actions = r.actions.filter { now - $0.value < restartPolicy.window }
            let counted: Bool
            if let death, death.inARow <= Defaults.crashesBeforeQuarantine, r.actions[death.seq] != nil {
                counted = false
            } else {
                guard r.times.count < restartPolicy.maxRestarts else { return nil }
                r.times.append(now)
                if let death { r.actions[death.seq] = now }
                counted = true
            }
            r.perNode[name, default: 0] += 1
            // For `zflux top`.
            if let data = try? JSONEncoder().encode(r.perNode) {
                try? data.write(to: URL(fileURLWithPath: runDirectory.restartsFile), options: .atomic)
            }
            guard counted else { return restartPolicy.initialBackoff }
            let backoff = restartPolicy.initialBackoff * (1 << min(r.times.count - 1, 16))
            return min(backoff, restartPolicy.maxBackoff)
        }
    }

    /// What the crash marker of the node `name` says, when it is a store that died applying an action.
    func deathOnAnAction(of name: String) -> (seq: UInt64, inARow: Int)? {
        guard name.hasPrefix("store-") else { return nil }
        return CrashMarker.lastDeath(path: runDirectory.crashMarker(of: String(name.dropFirst("store-".count))))
    }

    /// Starts a dead node again with the command it had.
    public func restart(_ name: String) throws {
        guard let command = children.withLock({ $0.first { $0.name == name }?.command }) else { return }
        try spawn(name: name, command)
    }

    /// The last line a node wrote to its log: why it stopped, when it stopped during start-up (a journal
    /// that refuses to open names the seq and what to do there), so the operator reads it where they look.
    static func lastLine(of log: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: log) else { return nil }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: size > 8192 ? size - 8192 : 0)
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        guard var line = text.split(separator: "\n").last(where: { !$0.allSatisfy(\.isWhitespace) }) else { return nil }
        // A command's error line starts with the binary's name ("zflux: …"): the message it goes into
        // already does.
        if let colon = line.firstRange(of: ": "), !line[..<colon.lowerBound].contains(" ") { line = line[colon.upperBound...] }
        return String(line.prefix(4096))
    }

    /// The exit status of a dispatcher of a pair that stopped leading (EX_TEMPFAIL): its supervisor (this
    /// one, or systemd's `RestartForceExitStatus=`) starts it again at once, as the standby.
    public static let steppedDownStatus: Int32 = 75

    public var isStopping: Bool { stopping.load(ordering: .acquiring) }

    public var pids: [(String, Int32)] { children.withLock { $0.map { ($0.name, $0.process.pid) } } }

    /// Waits until every node answers a status request and every store is subscribed to the dispatcher
    /// and caught up. A store still replaying is waited for while its version moves (``StartupWatch``),
    /// with a progress line through `report` every few seconds; a node silent or not moving for 15 s
    /// fails the start.
    public func waitUntilReady(report: @Sendable (String) -> Void = { _ in }) throws {
        var watch = StartupWatch()
        var endpoints = [("dispatcher", topology.dispatcher.intake)]
        endpoints += topology.stores.map { ("store \($0.name)", $0.snapshot) }
        for (name, endpoint) in endpoints {
            while true {
                if isStopping || signalled.load(ordering: .acquiring) { throw ClusterError("stopped while starting") }
                if let exited = children.withLock({ $0.first { !$0.process.isRunning } }) {
                    let log = runDirectory.log(of: exited.name)
                    throw ClusterError("\(exited.name) exited during start-up\(Self.lastLine(of: log).map { ": \($0)" } ?? ""); see \(log)")
                }
                let status = nodeStatus(endpoint: endpoint, security: security)
                switch watch.observe(name, status: status, now: MonotonicClock.nowMilliseconds()) {
                case .ready: break
                case .waiting(let progress):
                    if let progress { report(progress) }
                    usleep(20_000)
                    continue
                case .stuck(let reason):
                    // A pair's dispatchers serve nothing until one holds the lease in etcd, and one whose
                    // journal lacks what the pair committed does not campaign (its log says so).
                    let hint = topology.ha.map { ha in
                        let holdingBack = ha.dispatchers.map(\.name).filter { name in
                            let log = (try? String(contentsOfFile: runDirectory.log(of: "dispatcher-\(name)"), encoding: .utf8)) ?? ""
                            return log.contains("will not lead until it has followed a leader")
                        }
                        guard holdingBack.isEmpty else {
                            return " (\(holdingBack.joined(separator: " and ")): the journal ends before what the pair last committed, "
                                + "as etcd's \(ha.key)/led records, so it will not lead; docs/OPERATIONS.md, High availability)"
                        }
                        return
                            " (a dispatcher pair leads only once it holds its lease in etcd: is etcd at \(ha.etcd.joined(separator: ", ")) answering?)"
                    }
                    throw ClusterError("\(reason)\(name == "dispatcher" ? hint ?? "" : ""); see \(logDirectory)")
                }
                break
            }
        }
    }

    /// Stops every node: SIGTERM to each, newest first, then one shared `grace` for all of them to
    /// end; SIGKILL for any still alive after it. The nodes shut down side by side, so a cluster of
    /// nine stops within one grace period even on a busy machine, not within nine. Idempotent.
    public func stopAll(grace: Duration = .seconds(5), report: (@Sendable (String) -> Void)? = nil) {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let all = children.withLock { $0 }
        for child in all.reversed() { child.process.terminate() }
        let deadline = ContinuousClock.now + grace
        for child in all.reversed() {
            let left = max(deadline - ContinuousClock.now, .zero)
            if !child.process.killUnlessEnded(within: left) {
                report?("\(child.name) did not stop within \(grace) of SIGTERM; killed it")
            }
        }
        // What the nodes left in their process groups (a crash reporter, an effect's subprocess) goes too.
        for child in all { kill(-child.process.pid, SIGKILL) }
        cleanUp()
        continuation.finish()
    }

    private func cleanUp() {
        guard ownsRunDirectory.load(ordering: .acquiring) else { return }
        let fm = FileManager.default
        for path in topology.ipcPaths { try? fm.removeItem(atPath: path) }
        try? fm.removeItem(atPath: runDirectory.pidDirectory)
        // Kept as the last run's, for the commands that read a stopped cluster's files; gone as the
        // running cluster's, so the commands that talk to one say none runs.
        if rename(runDirectory.topologyFile, runDirectory.lastTopologyFile) != 0 { try? fm.removeItem(atPath: runDirectory.topologyFile) }
        try? fm.removeItem(atPath: runDirectory.supervisorPidFile)
        try? fm.removeItem(atPath: runDirectory.restartsFile)
    }

    /// Starts every node, waits until they are ready, calls `whenReady`, then keeps the cluster up:
    /// a node that dies is restarted with backoff until more die than the restart intensity allows;
    /// a signal (``forward(signal:)``) stops everything. What it does is told through `report`.
    /// Returns the exit status: 0 after a signal, 1 when the cluster had to stop because nodes kept dying.
    public func supervise(report: @escaping @Sendable (String) -> Void, whenReady: @Sendable () async throws -> Void) async throws -> Int32 {
        do {
            try start()
            try waitUntilReady(report: report)
        } catch {
            stopAll(report: report)
            throw error
        }
        try await whenReady()
        var status: Int32 = 0
        eventLoop: for await event in events {
            switch event {
            case .signal:
                break eventLoop
            case .childExited(let name, let code):
                if isStopping { continue }
                let log = runDirectory.log(of: name)
                if code == .exited(Supervisor.steppedDownStatus) {
                    // A dispatcher of a pair that stopped leading: not a crash. It comes back at once, as
                    // the standby, and does not count towards the restart intensity.
                    report("\(name) stopped leading; starting it again as the standby")
                    do {
                        try restart(name)
                    } catch {
                        report("\(name) could not be restarted: \(error)")
                        status = 1
                        break eventLoop
                    }
                    continue
                }
                let death = deathOnAnAction(of: name)
                guard let delay = restartDelay(for: name, diedApplying: death) else {
                    report(
                        "\(name) ended with \(code); more than \(restartPolicy.maxRestarts) restarts within \(restartPolicy.window): stopping the cluster (see \(log))"
                    )
                    status = 1
                    break eventLoop
                }
                let applying = death.map { " applying seq \($0.seq) (\($0.inARow) in a row)" } ?? ""
                report("\(name) ended with \(code)\(applying); restarting it in \(delay) (see \(log))")
                Task {
                    try? await Task.sleep(for: delay)
                    do {
                        try self.restart(name)
                    } catch {
                        report("\(name) could not be restarted: \(error)")
                        self.forward(signal: SIGTERM)
                    }
                }
            }
        }
        stopAll(report: report)
        return status
    }
}

import Foundation
import NodeSupport
import Synchronization
import FluxCore

/// Starts every node of a topology as its own `zflux` process, watches them, and tears them all
/// down (reverse order, SIGTERM, then SIGKILL after a grace period) when asked or when one dies.
final class Supervisor: Sendable {
    struct Child: Sendable {
        let name: String
        let command: [String]
        let process: Process
    }

    /// OTP's restart intensity: more than `maxRestarts` crashes within `window` stops the cluster.
    struct RestartPolicy: Sendable {
        var maxRestarts = 5
        var window: Duration = .seconds(30)
        var initialBackoff: Duration = .milliseconds(100)
        var maxBackoff: Duration = .seconds(5)
    }

    enum Event: Sendable {
        case childExited(name: String, status: Int32)
        case signal(Int32)
    }

    let topology: Topology
    /// How the supervisor's readiness probes connect (the cluster's client key; config checks loaded it).
    let security: Security.Settings?
    let runDirectory: String
    let logLevel: String
    private let children = Mutex<[Child]>([])
    let restartPolicy: RestartPolicy
    /// When each restart happened, for the intensity limit, and how many each node had.
    private let restarts = Mutex<(times: [ContinuousClock.Instant], perNode: [String: Int])>(([], [:]))
    private let stopping = Atomic<Bool>(false)
    /// Set once this supervisor owns the run directory's files, so only then does it clean them up.
    private let ownsRunDirectory = Atomic<Bool>(false)
    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    init(topology: Topology, runDirectory: String, logLevel: String, restartPolicy: RestartPolicy = RestartPolicy()) {
        self.topology = topology
        self.security = try? topology.clientSecurity()
        self.restartPolicy = restartPolicy
        self.runDirectory = runDirectory
        self.logLevel = logLevel
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
    }

    var logDirectory: String { runDirectory + "/logs" }
    var pidDirectory: String { runDirectory + "/pids" }

    /// Prepares the run directory and starts every node.
    func start() throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: runDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Also for a directory that existed: the ipc socket files inside are reachable only by this user.
        guard chmod(runDirectory, 0o700) == 0 else { throw CLIError("cannot make \(runDirectory) private (chmod 0700)") }
        try refuseIfRunning()
        ownsRunDirectory.store(true, ordering: .releasing)
        try fm.createDirectory(atPath: logDirectory, withIntermediateDirectories: true)
        try fm.createDirectory(atPath: pidDirectory, withIntermediateDirectories: true)
        // Socket files left by a cluster that was killed outright would make binds fail.
        for path in topology.ipcPaths { try? fm.removeItem(atPath: path) }
        try topology.write(runDirectory: runDirectory)
        try String(getpid()).write(toFile: runDirectory + "/supervisor.pid", atomically: true, encoding: .utf8)

        try spawn(name: "dispatcher", ["dispatcher"])
        for store in topology.stores { try spawn(name: "store-\(store.name)", ["store", store.name]) }
    }

    private func refuseIfRunning() throws {
        let pidFile = runDirectory + "/supervisor.pid"
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8), let pid = Int32(text) else { return }
        if pid != getpid() && kill(pid, 0) == 0 {
            throw CLIError("a cluster is already running in \(runDirectory) (supervisor pid \(pid)); stop it or pass another --run-dir")
        }
    }

    private func spawn(name: String, _ command: [String]) throws {
        if isStopping { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let arguments = command + ["--run-dir", runDirectory, "--supervisor-pid", String(getpid()), "--log-level", logLevel]
        process.arguments = arguments
        let logPath = "\(logDirectory)/\(name).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        let continuation = continuation
        process.terminationHandler = { process in
            continuation.yield(.childExited(name: name, status: process.terminationStatus))
        }
        try process.run()
        try String(process.processIdentifier).write(toFile: "\(pidDirectory)/\(name).pid", atomically: true, encoding: .utf8)
        children.withLock { children in
            let child = Child(name: name, command: command, process: process)
            if let index = children.firstIndex(where: { $0.name == name }) { children[index] = child } else { children.append(child) }
        }
    }

    func forward(signal: Int32) { continuation.yield(.signal(signal)) }

    /// Decides what to do about a node that died: nil when the restart intensity is exceeded (the
    /// cluster must stop), otherwise the backoff to wait before starting it again.
    func restartDelay(for name: String) -> Duration? {
        let now = ContinuousClock.now
        return restarts.withLock { r -> Duration? in
            r.times = r.times.filter { now - $0 < restartPolicy.window }
            guard r.times.count < restartPolicy.maxRestarts else { return nil }
            r.times.append(now)
            r.perNode[name, default: 0] += 1
            // For `zflux top`.
            if let data = try? JSONEncoder().encode(r.perNode) {
                try? data.write(to: URL(fileURLWithPath: runDirectory + "/restarts.json"), options: .atomic)
            }
            let backoff = restartPolicy.initialBackoff * (1 << min(r.times.count - 1, 16))
            return min(backoff, restartPolicy.maxBackoff)
        }
    }

    /// Starts a dead node again with the command it had.
    func restart(_ name: String) throws {
        guard let command = children.withLock({ $0.first { $0.name == name }?.command }) else { return }
        try spawn(name: name, command)
    }

    var restartCounts: [String: Int] { restarts.withLock { $0.perNode } }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    var pids: [(String, Int32)] { children.withLock { $0.map { ($0.name, $0.process.processIdentifier) } } }

    /// Waits until every node answers a status request and every store is subscribed to the dispatcher.
    func waitUntilReady(timeout: Duration = .seconds(15)) throws {
        let deadline = ContinuousClock.now + timeout
        var endpoints = [("dispatcher", topology.dispatcher.intake)]
        endpoints += topology.stores.map { ("store \($0.name)", $0.snapshot) }
        for (name, endpoint) in endpoints {
            while true {
                if isStopping { throw CLIError("stopped while starting") }
                if let exited = children.withLock({ $0.first { !$0.process.isRunning } }) {
                    throw CLIError("\(exited.name) exited during start-up; see \(logDirectory)/\(exited.name).log")
                }
                if nodeIsReady(endpoint: endpoint, security: security) { break }
                usleep(20_000)
                if ContinuousClock.now > deadline { throw CLIError("\(name) did not answer within \(timeout); see \(logDirectory)") }
            }
        }
    }

    /// Stops every node, newest first; SIGKILL for any still alive after `grace`. Idempotent.
    func stopAll(grace: Duration = .seconds(5)) {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let all = children.withLock { $0 }
        for child in all.reversed() where child.process.isRunning {
            kill(child.process.processIdentifier, SIGTERM)
            let deadline = ContinuousClock.now + grace
            while child.process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
            if child.process.isRunning {
                kill(child.process.processIdentifier, SIGKILL)
                child.process.waitUntilExit()
            }
        }
        cleanUp()
        continuation.finish()
    }

    private func cleanUp() {
        guard ownsRunDirectory.load(ordering: .acquiring) else { return }
        let fm = FileManager.default
        for path in topology.ipcPaths { try? fm.removeItem(atPath: path) }
        try? fm.removeItem(atPath: pidDirectory)
        try? fm.removeItem(atPath: runDirectory + "/" + Topology.fileName)
        try? fm.removeItem(atPath: runDirectory + "/supervisor.pid")
        try? fm.removeItem(atPath: runDirectory + "/restarts.json")
    }
}

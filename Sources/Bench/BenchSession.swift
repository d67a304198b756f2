import FluxCore
import Foundation
import Logging
import NodeSupport
import Synchronization
import ViewNode

/// What one load test runs: the parsed options of `zflux bench`, as plain values.
public struct BenchOptions: Sendable {
    /// A running cluster to measure instead of starting one.
    public struct Attached: Sendable {
        public var runDirectory: String
        public var topology: Topology
        public var security: Security.Settings?
        public init(runDirectory: String, topology: Topology, security: Security.Settings?) {
            self.runDirectory = runDirectory
            self.topology = topology
            self.security = security
        }
    }

    public var transport: Topology.Transport = .ipc
    /// tcp: the first port used (the floor's relays use ports from `basePort + 100`).
    public var basePort = 5670
    public var stores = 1
    /// Views (subscribers in the bench process) per store.
    public var views = 1
    public var clients = 1
    /// Actions per second (with `max`: the first rate tried).
    public var rate: Double = 10_000
    /// Search for the highest rate with zero loss.
    public var max = false
    public var duration: Double = 5
    public var warmUp: Double = 1
    public var payloadBytes = 64
    public var codec: WireCodec.Format = .binary
    public var fsync: FsyncPolicy = .batch
    public var stateItems = 10
    /// Also measure raw relays in the same topology.
    public var floor = false
    public var attach: Attached? = nil
    /// Keep the temporary cluster's directory.
    public var keep = false
    /// The `zflux` binary that runs the cluster and the floor's relays: the user's own binary, which
    /// hosts their apps.
    public var executable: String
    /// The apps that binary hosts: payloads of their actions are encoded (and checked) by the app
    /// itself in `codec`; an app not among them gets JSON payloads, which every node reads and the
    /// dispatcher judges.
    public var apps: [any AnyApp] = []
    /// What to dispatch (nil: the stock ledger bench, sized by `stateItems` and `payloadBytes`).
    public var workload: Workload? = nil

    public init(executable: String) { self.executable = executable }
}

/// Why a load test could not run.
public struct BenchError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The measured outcome and the histograms behind it (for the .hgrm and SVG files).
public struct BenchOutcome: Sendable {
    public var report: BenchReport
    public var result: TrialResult
    public var floor: TrialResult?
    public var e2e: LatencyHistogram { result.e2e }
    public var ack: LatencyHistogram { result.ack }
}

/// A child process the bench started; stopped (SIGTERM, then SIGKILL) when the bench ends.
final class BenchChild {
    let name: String
    let process = Process()
    let lines = LineBuffer()

    final class LineBuffer: Sendable {
        private let storage = Mutex<[String]>([])
        func append(_ new: [String]) { storage.withLock { $0.append(contentsOf: new) } }
        func withLock<R>(_ body: ([String]) -> R) -> R { storage.withLock { body($0) } }
    }

    init(name: String, executable: String, arguments: [String]) throws {
        self.name = name
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        let lines = lines
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else { handle.readabilityHandler = nil; return }
            let text = String(decoding: data, as: UTF8.self)
            lines.append(text.split(separator: "\n").map(String.init))
        }
        try process.run()
    }

    /// Waits for a line of its stderr containing `text`; fails if it exits first or the deadline passes.
    func waitForLine(containing text: String, seconds: Double) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let line = lines.withLock({ $0.first { $0.contains(text) } }) { return line }
            guard process.isRunning else { break }
            usleep(10_000)
        }
        let tail = lines.withLock { $0.suffix(10).joined(separator: "\n") }
        throw BenchError("\(name) did not report '\(text)' within \(Int(seconds)) s\(tail.isEmpty ? "" : ":\n" + tail)")
    }

    func stop() { process.stop(grace: .seconds(10)) }
}

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

/// Everything one `zflux bench` run starts, measures and stops.
public final class BenchSession {
    let options: BenchOptions
    let directory: String
    let ownsDirectory: Bool
    var cluster: BenchChild?
    var topology: Topology
    /// CURVE settings when attached to a cluster that has them (a cluster the bench starts has none).
    var security: Security.Settings? = nil
    var nodePids: [String: Int32] = [:]
    var views: [ViewNode] = []
    var viewLogs: [ArrivalLog] = []
    /// The current trial's start (monotonic ns); views time their arrivals from it.
    let start = StartTime()

    final class StartTime: Sendable {
        private let value = Atomic<UInt64>(0)
        func set(_ new: UInt64) { value.store(new, ordering: .releasing) }
        var current: UInt64 { value.load(ordering: .acquiring) }
    }

    public init(options: BenchOptions) throws {
        self.options = options
        // The workload's payloads, checked by their apps before anything starts: a typo'd field is an
        // error now, with the app's own reason, not a run of NACKs.
        _ = try LoadMix(BenchSession.workload(options)) { app, type, arguments in
            try BenchSession.encode(options, app: app, type: type, arguments: arguments)
        }
        if let attached = options.attach {
            directory = attached.runDirectory
            ownsDirectory = false
            // The cluster's own codec is what its nodes write; the bench's actions follow --codec.
            (topology, security) = (attached.topology, attached.security)
        } else {
            // The cluster runs this binary: it must host every app the load drives.
            let hosted = Set(options.apps.map(\.name))
            if let missing = BenchSession.workload(options).apps.first(where: { !hosted.contains($0) }) {
                throw BenchError(
                    "this binary does not host app '\(missing)' (it hosts: \(hosted.sorted().joined(separator: ", "))), so it cannot start a cluster of it; use --attach with a cluster that runs it"
                )
            }
            directory = NSTemporaryDirectory() + "zflux-bench-\(getpid())"
            ownsDirectory = !options.keep
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            topology = Topology(dispatcher: .init(intake: "", actions: "", replay: ""), stores: [], heartbeatMilliseconds: 200)
            do {
                try startCluster()
            } catch {
                // Nothing of a cluster that did not start is left behind: its process, nor its directory.
                cluster?.stop()
                if !options.keep { try? FileManager.default.removeItem(atPath: directory) }
                throw error
            }
        }
        for app in workload.apps where !topology.stores.contains(where: { $0.app == app }) {
            let running = topology.stores.map { "\($0.name) (\($0.app))" }.joined(separator: ", ")
            throw BenchError("the cluster in \(directory) has no store running app '\(app)', which \(workload.name) drives; its stores: \(running)")
        }
        try startViews()
    }

    /// What this run dispatches.
    var workload: Workload { BenchSession.workload(options) }

    static func workload(_ options: BenchOptions) -> Workload {
        if let workload = options.workload { return workload }
        // The probe: a post with an empty memo, as the binary hosting the ledger encodes it.
        let probe =
            (try? options.apps.first { $0.name == "ledger" }?
            .wirePayload(type: "post", argumentsJSON: Array(#"{"account":0,"amount":1,"memo":""}"#.utf8), format: options.codec))?.count ?? 40
        return .ledger(stateItems: options.stateItems, payloadBytes: options.payloadBytes, probeBytes: probe)
    }

    /// The stores that run the workload's apps: their views measure what is visible.
    var workloadStores: [Topology.StoreEndpoints] { topology.stores.filter { workload.apps.contains($0.app) } }

    /// The hosted app named `name`.
    func hosted(_ name: String) -> (any AnyApp)? { options.apps.first { $0.name == name } }

    /// An action's arguments as a wire payload: encoded and checked by its app when hosted, else JSON.
    func encode(app: String, type: String, arguments: [UInt8]) throws -> [UInt8] {
        try BenchSession.encode(options, app: app, type: type, arguments: arguments)
    }

    static func encode(_ options: BenchOptions, app name: String, type: String, arguments: [UInt8]) throws -> [UInt8] {
        do throws(ActionError) {
            if let app = options.apps.first(where: { $0.name == name }) {
                return try app.wirePayload(type: type, argumentsJSON: arguments, format: options.codec)
            }
            return try ActionCoding.json(type: type, arguments: arguments)
        } catch {
            throw BenchError("\(name).\(type) \(String(decoding: arguments, as: UTF8.self)): \(error.reason)")
        }
    }

    func startCluster() throws {
        var config = """
            [cluster]
            transport = "\(options.transport.rawValue)"
            base_port = \(options.basePort)
            codec = "\(options.codec.rawValue)"
            high_water_mark = 1000000

            [journal]
            fsync = "\(options.fsync)"
            snapshot_every = 1000000000

            """
        // One store per app the workload drives (--stores copies of each; replicas without effects),
        // and one for each app those read.
        var apps = workload.apps
        var index = 0
        while index < apps.count {
            for read in hosted(apps[index])?.reads ?? [] where !apps.contains(read) { apps.append(read) }
            index += 1
        }
        for app in apps {
            let copies = workload.apps.contains(app) ? options.stores : 1
            for copy in 1...copies {
                config += "\n[[store]]\nname = \"\(app)-\(copy)\"\napp = \"\(app)\"\n"
                if copy > 1 { config += "effects = false\n" }
            }
        }
        let path = directory + "/bench.toml"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        progress("starting a cluster in \(directory)")
        let child = try BenchChild(
            name: "cluster", executable: options.executable,
            arguments: [
                "cluster", "up", "--config", path, "--run-dir", directory, "--log-level", "warning", "--supervisor-pid", "\(getpid())",
            ])
        cluster = child
        let line = try child.waitForLine(containing: "cluster up in", seconds: 60)
        // "cluster up in DIR: dispatcher (pid 12), ledger-1 (pid 13)"
        let pattern = try NSRegularExpression(pattern: #"([A-Za-z0-9_-]+) \(pid (\d+)\)"#)
        for match in pattern.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
            guard let name = Range(match.range(at: 1), in: line), let pid = Range(match.range(at: 2), in: line) else { continue }
            nodePids[String(line[name])] = Int32(line[pid])
        }
        topology = try Topology.load(runDirectory: directory)
    }

    func startViews() throws {
        let logger = Logger(label: "zflux.bench")
        for store in workloadStores {
            for number in 1...options.views {
                let log = ArrivalLog(name: "\(store.name)#\(number)", app: store.app)
                // A hosted app's replica applies changes-only updates; any other view follows versions
                // only (tracksVersionsOnly), without the state's type.
                var configuration = ViewNode.Configuration(topology: topology, store: store, app: hosted(store.app))
                configuration.materializesState = false
                configuration.security = security
                let start = start
                let view = try ViewNode(configuration: configuration, logger: logger) { update in
                    let now = MonotonicClock.nowNanoseconds(), origin = start.current
                    // Visible once the view knows the state is current through the action: a new version, or
                    // the store's heartbeat saying nothing changed since (an action that changes nothing, or
                    // that the store refused). Only a new version says when it was published.
                    let through = max(update.version, update.currentThrough)
                    log.record(
                        Arrival(
                            version: through, at: now >= origin ? now - origin : 0, publishedAt: through == update.version ? update.publishedAt : 0))
                    if update.updateBytes > 0 { log.countUpdate(bytes: update.updateBytes) }
                }
                Task.detached { try? await view.run() }
                views.append(view)
                viewLogs.append(log)
            }
        }
    }

    /// The workload's actions as wire payloads, ahead of the run (`actions`: how many it sends, so
    /// `${seq}` can number each of them).
    func mix(actions: Int? = nil) throws -> LoadMix {
        try LoadMix(workload, actions: actions) { app, type, arguments in try encode(app: app, type: type, arguments: arguments) }
    }

    /// Dispatches the workload's prepare steps (the stock bench: fills the ledger) and waits until
    /// every view of their apps shows them.
    func prepareState() throws {
        let steps = workload.prepare
        guard !steps.isEmpty else { return }
        let connection = try DispatchConnection(intake: topology.dispatcher.intake, security: security)
        defer { connection.close() }
        for step in steps {
            let payload = try encode(app: step.app, type: step.action, arguments: Array(step.arguments.utf8))
            switch try connection.dispatch(app: step.app, actionType: step.action, payload: payload) {
            case .acknowledged(let seq):
                try waitForViews(of: step.app, atLeast: seq, seconds: 60, what: "the views to show \(step.app).\(step.action)")
            case .rejected(let reason):
                throw BenchError("the dispatcher refused \(step.app).\(step.action): \(reason)")
            default:
                throw BenchError("the dispatcher did not answer \(step.app).\(step.action)")
            }
        }
    }

    func waitForViews(of app: String, atLeast seq: UInt64, seconds: Double, what: String) throws {
        let deadline = Date().addingTimeInterval(seconds)
        let logs = viewLogs.filter { $0.app == app }
        while logs.contains(where: { $0.latestVersion < seq }) {
            guard Date() < deadline else {
                let behind = logs.filter { $0.latestVersion < seq }.map { "\($0.name) at \($0.latestVersion)" }
                throw BenchError("timed out waiting for \(what): \(behind.joined(separator: ", ")) (want \(seq))")
            }
            usleep(2_000)
        }
    }

    public func measure() throws -> BenchOutcome {
        try prepareState()
        var outcome: BenchOutcome
        let hostBefore = HostCPU.now()
        if options.max {
            outcome = try search(label: "zflux") { rate in try self.trial(rate: rate) }
        } else {
            let (result, cpu) = try trial(rate: options.rate)
            outcome = BenchOutcome(report: report(rate: options.rate, result: result, cpu: cpu, floor: nil), result: result)
        }
        outcome.report.hostStealPercent = HostCPU.now()?.stealPercent(since: hostBefore)
        if options.floor {
            let floorHostBefore = HostCPU.now()
            let floor = try FloorSession(options: options, directory: directory)
            defer { floor.shutdown() }
            let floorResult: TrialResult
            let floorCPU: [String: Double]
            if options.max {
                let found = try search(label: "floor") { rate in (try floor.trial(rate: rate, session: self), floor.lastCPU) }
                (floorResult, floorCPU) = (found.result, found.report.cpuSeconds)
            } else {
                floorResult = try floor.trial(rate: options.rate, session: self)
                floorCPU = floor.lastCPU
            }
            outcome.report.attachFloor(floorResult, cpu: floorCPU, hostStealPercent: HostCPU.now()?.stealPercent(since: floorHostBefore))
            // The disk's own cost, where the cluster keeps its journal.
            outcome.report.fsyncProbe = try floor.fsyncProbe()
            outcome.floor = floorResult
        }
        return outcome
    }

    /// Whether a trial at `rate` held: nothing lost or refused, and at least 95% of what its schedule
    /// sent on average acknowledged per second (less than `rate` during a ramp, by design).
    static func held(_ result: TrialResult, rate: Double) -> Bool {
        let expected = result.rateScheduled > 0 ? min(rate, result.rateScheduled) : rate
        return result.lost == 0 && result.nacked == 0 && result.acked == result.sent && result.sent > 0
            && result.rateAchieved >= 0.95 * expected
    }

    /// Doubles the rate until a trial does not hold, then halves the gap three times. The outcome
    /// is the fastest trial that held (for the floor, its result is in `floor`).
    func search(label: String, _ trial: (Double) throws -> (TrialResult, [String: Double])) throws -> BenchOutcome {
        var steps: [BenchReport.SearchStep] = []
        var best: (rate: Double, result: TrialResult, cpu: [String: Double])?
        var low = 0.0, high = Double.infinity, rate = options.rate
        for _ in 0..<16 {
            let (result, cpu) = try trial(rate)
            let held = BenchSession.held(result, rate: rate)
            steps.append(.init(rateTarget: rate, rateAchieved: result.rateAchieved, lost: result.lost, e2eP99Us: result.e2e.stats.p99Us, held: held))
            progress(
                "\(label): \(BenchReport.rate(rate)) \(held ? "held" : "did not hold") (achieved \(BenchReport.rate(result.rateAchieved)), lost \(result.lost))"
            )
            if held {
                low = rate
                if best == nil || rate > best!.rate { best = (rate, result, cpu) }
            } else {
                high = rate
            }
            if high == .infinity { rate *= 2 } else if high - low > high * 0.1 && low > 0 { rate = ((low + high) / 2).rounded() } else { break }
            if rate > 5_000_000 { break }
        }
        let chosen = best ?? (rate, TrialResult(), [:])
        var outcome = BenchOutcome(report: report(rate: chosen.rate, result: chosen.result, cpu: chosen.cpu, floor: nil), result: chosen.result)
        outcome.report.search = steps
        return outcome
    }

    func report(rate: Double, result: TrialResult, cpu: [String: Double], floor: TrialResult?) -> BenchReport {
        let setup = BenchReport.Setup(
            transport: options.attach != nil ? "attached" : options.transport.rawValue, stores: workloadStores.count, views: options.views,
            clients: options.clients, codec: options.codec.rawValue, fsync: options.attach != nil ? "cluster's" : options.fsync.rawValue,
            payloadBytes: options.payloadBytes, stateItems: options.stateItems, durationS: options.duration, warmUpS: options.warmUp,
            workload: workload.name, rampS: workload.rampSeconds > 0 ? workload.rampSeconds : nil, actions: workload.shares)
        let bytes = viewLogs.compactMap(\.meanUpdateBytes)
        return BenchReport(
            setup: setup, rateTarget: rate, result: result, cpuSeconds: cpu, floor: floor,
            stateUpdateBytes: bytes.isEmpty ? nil : bytes.reduce(0, +) / Double(bytes.count))
    }

    /// One open-loop run against the cluster: (result, CPU seconds per process).
    func trial(rate: Double) throws -> (TrialResult, [String: Double]) {
        let schedule = OpenLoopSchedule(rate: rate, seconds: options.duration + options.warmUp, ramp: workload.rampSeconds)
        let mix = try mix(actions: schedule.count)
        var client = LoadClient(intake: topology.dispatcher.intake, mix: mix, clients: options.clients)
        client.security = security
        let cpuBefore = cpuNow()
        let log = try drive(client, schedule, logs: viewLogs) { self.start.set($0) }
        let cpuAfter = cpuNow()
        let cpu = cpuAfter.reduce(into: [String: Double]()) { out, entry in
            if let before = cpuBefore[entry.key] { out[entry.key] = entry.value - before }
        }
        let startWall = log.startWall
        let result = Accounting.evaluate(
            log.log, subscribers: viewLogs.map(\.all), apps: (viewLogs.map(\.app), mix.kinds.map(\.app)), warmUp: UInt64(options.warmUp * 1e9),
            startWall: startWall)
        return (result, cpu)
    }

    struct Driven { var log: TrialLog; var startWall: Int64 }

    /// Runs `client` on its own thread from a start a little in the future, shows progress, then waits
    /// for the subscribers to see the newest acknowledged seq (or gives up after 10 s: that is loss).
    func drive(_ client: LoadClient, _ schedule: OpenLoopSchedule, logs: [ArrivalLog], setStart: (UInt64) -> Void) throws -> Driven {
        for log in logs { log.reset() }
        let startMono = MonotonicClock.nowNanoseconds() + 50_000_000
        let startWall = WallClock.nowNanoseconds() + 50_000_000
        setStart(startMono)
        let progressCounters = LoadProgress()
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<TrialLog, any Error>?>(nil)
        let thread = Thread {
            let result = Result { try client.run(schedule, start: startMono, progress: progressCounters) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        thread.name = "zflux-bench-client"
        thread.start()
        let began = Date()
        while done.wait(timeout: .now() + 1) == .timedOut {
            progress(
                String(
                    format: "%5.1f s  sent %d of %d  answered %d  (%@)", Date().timeIntervalSince(began),
                    progressCounters.sent, schedule.count, progressCounters.acked, BenchReport.rate(schedule.rate)))
        }
        let log = try outcome.withLock { try $0!.get() }
        let target = log.maxSeq
        let deadline = Date().addingTimeInterval(10)
        while logs.contains(where: { $0.latestVersion < target }) && Date() < deadline { usleep(2_000) }
        return Driven(log: log, startWall: startWall)
    }

    func cpuNow() -> [String: Double] {
        var out: [String: Double] = [:]
        for (name, pid) in nodePids { out[name] = cpuSeconds(pid: pid) }
        out["bench"] = cpuSeconds(pid: getpid())
        return out
    }

    func progress(_ line: String) {
        StandardOutput.error("zflux bench: " + line + "\n")
    }

    public func shutdown() {
        for view in views { view.stop() }
        cluster?.stop()
        if ownsDirectory && options.attach == nil { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// The floor: C programs on libzmq (`zflux-floor`, built beside `zflux`) in zflux's topology: a
/// sequencer where the dispatcher would be, one forward relay per store, as many sinks per relay as
/// views per store, and a client with the same schedule and wake-ups as the bench's own. Nothing of
/// zflux's code runs in it, so it cannot flatter zflux.
final class FloorSession {
    let options: BenchOptions
    let directory: String
    let program: String
    var relays: [BenchChild] = []
    let intake: String
    let sinks: [String]
    var trials = 0
    /// CPU seconds the floor's processes used in the last trial, by process.
    private(set) var lastCPU: [String: Double] = [:]
    /// Messages every sink received in the last trial (acknowledged actions × sinks).
    private(set) var lastDelivered = 0

    /// `zflux-floor` beside the `zflux` binary.
    static func program(beside executable: String) -> String {
        (executable as NSString).deletingLastPathComponent + "/zflux-floor"
    }

    init(options: BenchOptions, directory: String) throws {
        self.options = options
        self.directory = directory
        program = FloorSession.program(beside: options.executable)
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw BenchError("--floor needs \(program), built with zflux (`swift build`, or `make build`)")
        }
        func endpoint(_ name: String, _ offset: Int) -> String {
            options.transport == .tcp ? "tcp://127.0.0.1:\(options.basePort + 100 + offset)" : "ipc://\(directory)/floor-\(name)"
        }
        intake = endpoint("intake", 0)
        let published = endpoint("sequenced", 1)
        relays.append(
            try BenchChild(name: "floor sequencer", executable: program, arguments: ["sequencer", "--input", intake, "--publish", published]))
        var sinks: [String] = []
        for index in 1...options.stores {
            let out = endpoint("store-\(index)", 1 + index)
            relays.append(
                try BenchChild(name: "floor relay \(index)", executable: program, arguments: ["forward", "--input", published, "--publish", out]))
            sinks.append(out)
        }
        self.sinks = sinks
    }

    func trial(rate: Double, session: BenchSession) throws -> TrialResult {
        trials += 1
        let schedule = OpenLoopSchedule(rate: rate, seconds: options.duration + options.warmUp)
        let base = "\(directory)/floor-trial-\(trials)"
        let payloadBytes = try session.mix().payload(of: 0).count
        let timeoutMs = Int(schedule.span / 1_000_000) + 60_000
        var sinkFiles: [String] = []
        var sinkChildren: [BenchChild] = []
        defer { for child in sinkChildren { child.stop() } }
        for (relay, endpoint) in sinks.enumerated() {
            for view in 1...options.views {
                let file = "\(base)-sink-\(relay + 1)-\(view)"
                sinkFiles.append(file)
                sinkChildren.append(
                    try BenchChild(
                        name: "floor sink", executable: program,
                        arguments: ["sink", "--input", endpoint, "--out", file, "--count", "\(schedule.count)", "--timeout-ms", "\(timeoutMs)"]))
            }
        }
        let relayCPU = relays.map { cpuSeconds(pid: $0.process.processIdentifier) ?? 0 }
        let clientFile = base + "-client"
        session.progress("floor: \(BenchReport.rate(rate)) for \(BenchReport.number(options.duration + options.warmUp)) s")
        let client = try BenchChild(
            name: "floor client", executable: program,
            arguments: [
                "client", "--connect", intake, "--rate", "\(rate)", "--count", "\(schedule.count)", "--clients", "\(options.clients)",
                "--payload-bytes", "\(payloadBytes)", "--out", clientFile,
            ] + sinkFiles.flatMap { ["--ready", $0 + ".ready"] })
        defer { client.stop() }
        let deadline = Date().addingTimeInterval(Double(schedule.span) / 1e9 + 60)
        while client.process.isRunning {
            guard Date() < deadline else { throw BenchError("the floor's client did not finish within \(Int(Double(schedule.span) / 1e9 + 60)) s") }
            usleep(20_000)
        }
        guard client.process.terminationStatus == 0 else {
            throw BenchError("the floor's client failed: \(client.lines.withLock { $0.suffix(5).joined(separator: "\n") })")
        }
        // The sinks stop by themselves once they saw every action; a lost one would keep them waiting.
        let sinksDeadline = Date().addingTimeInterval(5)
        while sinkChildren.contains(where: { $0.process.isRunning }) && Date() < sinksDeadline { usleep(20_000) }
        for child in sinkChildren { child.stop() }
        let (log, start) = try FloorFiles.clientLog(clientFile, schedule: schedule)
        let arrivals = try zip(sinkFiles, sinkChildren).map { file, child in
            guard FileManager.default.fileExists(atPath: file) else {
                let said = child.lines.withLock { $0.suffix(5).joined(separator: "\n") }
                throw BenchError(
                    "a floor sink wrote no \(file) (exit status \(child.process.terminationStatus), reason \(child.process.terminationReason.rawValue))"
                        + (said.isEmpty ? "" : ":\n" + said))
            }
            return try FloorFiles.arrivals(file, start: start)
        }
        lastDelivered = arrivals.reduce(0) { $0 + $1.count }
        var cpu: [String: Double] = [:]
        for (index, relay) in relays.enumerated() { cpu[relay.name] = (cpuSeconds(pid: relay.process.processIdentifier) ?? 0) - relayCPU[index] }
        cpu["floor client"] = FloorFiles.cpuSeconds(clientFile)
        cpu["floor sinks"] = sinkFiles.reduce(0) { $0 + FloorFiles.cpuSeconds($1) }
        lastCPU = cpu
        return Accounting.evaluate(log, subscribers: arrivals, warmUp: UInt64(options.warmUp * 1e9), startWall: 0)
    }

    /// Times write + fdatasync of a journal-sized record in the bench's directory (the journal's
    /// filesystem).
    func fsyncProbe() throws -> BenchReport.FsyncProbe {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["fsync", "--dir", directory, "--count", "500", "--bytes", "160"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        guard process.terminationStatus == 0, let probe = try? decoder.decode(BenchReport.FsyncProbe.self, from: data) else {
            throw BenchError("the fsync probe failed in \(directory)")
        }
        return probe
    }

    func shutdown() {
        for relay in relays { relay.stop() }
    }
}

/// What the floor's C programs write (`Sources/zflux-floor/main.c` has the layout).
enum FloorFiles {
    static func words(_ path: String) throws -> [UInt64] {
        guard let data = FileManager.default.contents(atPath: path) else { throw BenchError("the floor wrote no \(path)") }
        return data.withUnsafeBytes { raw in (0..<(data.count / 8)).map { raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self) } }
    }

    /// The client's log, and its start (monotonic ns).
    static func clientLog(_ path: String, schedule: OpenLoopSchedule) throws -> (TrialLog, UInt64) {
        let words = try words(path)
        guard words.count == 2 + 2 * schedule.count else { throw BenchError("\(path) holds \(words.count) words, not \(2 + 2 * schedule.count)") }
        var log = TrialLog(schedule: schedule)
        log.sent = Int(words[1])
        for index in 0..<schedule.count where words[3 + 2 * index] != 0 {
            log.acknowledge(index: index, seq: words[3 + 2 * index], at: words[2 + 2 * index], sequencedAt: 0)
        }
        return (log, words[0])
    }

    /// A sink's arrivals, in times after `start`.
    static func arrivals(_ path: String, start: UInt64) throws -> [Arrival] {
        let words = try words(path)
        return stride(from: 0, to: words.count - 1, by: 2).map { Arrival(version: words[$0], at: words[$0 + 1] >= start ? words[$0 + 1] - start : 0) }
    }

    static func cpuSeconds(_ path: String) -> Double {
        guard let text = try? String(contentsOfFile: path + ".cpu", encoding: .utf8),
            let us = Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return 0 }
        return us / 1e6
    }
}

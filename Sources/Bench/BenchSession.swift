import FluxCore
import Foundation
import Logging
import NodeSupport
import Synchronization
import ViewNode

/// The measured outcome and the histograms behind it (for the .hgrm and SVG files).
public struct BenchOutcome: Sendable {
    public var report: BenchReport
    public var result: TrialResult
    public var floor: TrialResult?
    public var e2e: LatencyHistogram { result.e2e }
    public var ack: LatencyHistogram { result.ack }
}

/// Everything one `zflux bench` run starts, measures and stops.
public final class BenchSession {
    let options: BenchOptions
    let directory: String
    let ownsDirectory: Bool
    /// The cluster this run started (nil when attached to one).
    var cluster: BenchCluster?
    var topology: Topology
    /// CURVE settings when attached to a cluster that has them (a cluster the bench starts has none).
    var security: Security.Settings? = nil
    var views: [ViewNode] = []
    var viewLogs: [ArrivalLog] = []
    /// What `zflux devtools` follows while an attached run goes (nil: not attached, or not writable).
    var feed: BenchLiveFeed?
    /// The current trial's start (monotonic ns); views time their arrivals from it.
    let start = StartTime()
    /// The journal's syncs during the last trial, as the dispatcher's status told them.
    var lastJournalSyncs: BenchReport.JournalSyncs?

    final class StartTime: Sendable {
        private let value = Atomic<UInt64>(0)
        func set(_ new: UInt64) { value.store(new, ordering: .releasing) }
        var current: UInt64 { value.load(ordering: .acquiring) }
    }

    public init(options: BenchOptions) throws {
        self.options = options
        // Before anything starts, not after the whole load: the floor's program must be there.
        if options.floor { try FloorSession.checkProgram(beside: options.executable) }
        let workload = BenchSession.workload(options)
        // The workload's payloads, checked by their apps before anything starts: a typo'd field is an
        // error now, with the app's own reason, not a run of NACKs.
        // Those with a ${from …} are checked once it is read, after the prepare steps.
        var checked = workload
        checked.mix = workload.mix.filter { $0.payload.references.isEmpty }
        if !checked.mix.isEmpty {
            _ = try LoadMix(checked) { app, type, arguments in
                try BenchSession.encode(options, app: app, type: type, arguments: arguments)
            }
        }
        if let attached = options.attach {
            directory = attached.runDirectory
            ownsDirectory = false
            // The cluster's own codec is what its nodes write; the bench's actions follow --codec.
            (topology, security) = (attached.topology, attached.security)
        } else {
            // The cluster runs this binary: it must host every app the load drives.
            let hosted = Set(options.apps.map(\.name))
            if let missing = workload.apps.first(where: { !hosted.contains($0) }) {
                throw BenchError(
                    "this binary does not host app '\(missing)' (it hosts: \(hosted.sorted().joined(separator: ", "))), so it cannot start a cluster of it; use --attach with a cluster that runs it"
                )
            }
            let directory = NSTemporaryDirectory() + "zflux-bench-\(getpid())"
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            BenchSession.progress("starting a cluster in \(directory)")
            do {
                let cluster = try BenchCluster(options: options, workload: workload, directory: directory)
                (self.cluster, topology) = (cluster, cluster.topology)
            } catch {
                // Nothing of a cluster that did not start is left behind: its process (BenchCluster stops
                // it), nor its directory.
                if !options.keep { try? FileManager.default.removeItem(atPath: directory) }
                throw error
            }
            self.directory = directory
            ownsDirectory = !options.keep
        }
        for app in workload.apps {
            do {
                _ = try topology.requireStores(running: app)
            } catch {
                throw BenchError("\(directory): \(error); \(workload.name) drives it")
            }
        }
        try startViews()
    }

    /// What this run dispatches: once the prepare steps are applied, with the values its `${from …}`
    /// templates select in the state they left.
    var workload: Workload { resolvedWorkload ?? BenchSession.workload(options) }
    private var resolvedWorkload: Workload?

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
                    // A refusal whose state the view holds makes it current through the refused action.
                    let through = max(update.version, update.currentThrough)
                    if let refusal = update.rejection { log.recordRefusal(seq: refusal.seq, reason: refusal.reason) }
                    log.record(
                        Arrival(
                            version: through, at: now >= origin ? now - origin : 0,
                            publishedAtNanoseconds: through == update.version ? update.publishedAtNanoseconds : 0))
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
        try dispatchPrepareSteps()
        // What the actions refer to, read from the state the steps left (or, attached, the state as it is).
        let unresolved = BenchSession.workload(options)
        guard !unresolved.references.isEmpty else { return }
        resolvedWorkload = try unresolved.resolvingReferences { app in try self.stateJSON(of: app) }
        BenchSession.progress("read from the state: \(unresolved.references.map { "${from \($0.app) \($0.path)}" }.joined(separator: ", "))")
    }

    /// The state of a store of `app`, as JSON (the app's own, or read without its types).
    func stateJSON(of app: String) throws -> JSONValue {
        guard let store = topology.stores.first(where: { $0.app == app }) else {
            throw BenchError("${from \(app) …}: the cluster runs no store of app '\(app)'")
        }
        guard
            let reply = try requestReply(
                endpoint: store.snapshot, security: security, request: Message(header: Header(kind: .snapshotRequest)), expecting: .snapshot,
                timeoutMilliseconds: 10_000)
        else { throw BenchError("${from \(app) …}: store \(store.name) did not answer within 10 s") }
        let json = try options.apps.first { $0.name == app }?.stateJSON(fromWire: reply.payload) ?? GenericJSON.json(fromWire: reply.payload)
        return JSONValue(parsing: json)
    }

    func dispatchPrepareSteps() throws {
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

    /// Measures the cluster; when attached, writes the run's live feed (``BenchLiveFeed``) as it goes,
    /// ending with the report or the error.
    public func measure() throws -> BenchOutcome {
        startFeed()
        do {
            let outcome = try measureTrials()
            feed?.report(json: outcome.report.json())
            return outcome
        } catch {
            feed?.failed("\(error)")
            throw error
        }
    }

    /// The live feed in the attached cluster's run directory (a run that starts its own cluster has
    /// nobody to follow it); a run directory it cannot write to only costs the feed.
    func startFeed() {
        guard options.attach != nil else { return }
        do {
            feed = try BenchLiveFeed(
                runDirectory: directory,
                start: [
                    "pid": Int(getpid()), "rate": options.rate, "duration_s": options.duration, "warm_up_s": options.warmUp,
                    "workload": workload.name, "max": options.max, "floor": options.floor,
                ])
        } catch {
            BenchSession.progress("no live feed for devtools: \(error)")
        }
    }

    func measureTrials() throws -> BenchOutcome {
        try prepareState()
        var outcome: BenchOutcome
        let hostBefore = HostCPU.now()
        if options.max {
            outcome = try search(label: "zflux") { rate in try self.trial(rate: rate) }.outcome
        } else {
            let (result, usage) = try trial(rate: options.rate)
            outcome = BenchOutcome(report: report(rate: options.rate, result: result, usage: usage, floor: nil), result: result)
            outcome.report.journalSyncs = lastJournalSyncs
        }
        outcome.report.hostStealPercent = HostCPU.now()?.stealPercent(since: hostBefore)
        if options.floor {
            let floorHostBefore = HostCPU.now()
            let floor = try FloorSession(options: options, directory: directory)
            defer { floor.shutdown() }
            let floorResult: TrialResult
            let floorUsage: ProcessUsage
            if options.max {
                let found = try search(label: "floor") { rate in (try floor.trial(rate: rate, session: self), floor.lastUsage) }
                (floorResult, floorUsage) = (found.outcome.result, found.usage)
            } else {
                floorResult = try floor.trial(rate: options.rate, session: self)
                floorUsage = floor.lastUsage
            }
            outcome.report.attachFloor(
                floorResult, cpu: floorUsage.cpuSeconds, contextSwitches: floorUsage.contextSwitches,
                hostStealPercent: HostCPU.now()?.stealPercent(since: floorHostBefore))
            // The disk's own cost, where the cluster keeps its journal.
            outcome.report.fsyncProbe = try floor.fsyncProbe()
            outcome.floor = floorResult
        }
        return outcome
    }

    /// Whether a trial at `rate` held: nothing lost or refused, at least 95% of what its schedule
    /// sent on average acknowledged per second (less than `rate` during a ramp, by design), and an
    /// e2e p99 within ``heldP99LimitUs``. A queue that grows all through a trial still lets most of
    /// the actions through by its end; its latency is what gives it away.
    static func held(_ result: TrialResult, rate: Double) -> Bool {
        let expected = result.rateScheduled > 0 ? min(rate, result.rateScheduled) : rate
        return result.lost == 0 && result.nacked == 0 && result.acked == result.sent && result.sent > 0
            && result.rateAchieved >= 0.95 * expected && result.e2e.stats.p99Us <= heldP99LimitUs
    }

    /// The most e2e p99 a held rate may show: 20 ms.
    static let heldP99LimitUs = 20_000.0

    /// The rate the search tries after `rate`, given the fastest that held (`low`, 0: none yet) and the
    /// slowest that did not (`high`, infinity: none yet); nil when the search is done. Up by doubling
    /// while everything holds; down by halving while nothing has (a first rate that does not hold is
    /// not the answer "0/s"), to 100/s at the least; then into the gap until it is within 10%.
    static func nextSearchRate(_ rate: Double, low: Double, high: Double) -> Double? {
        if high == .infinity { return rate * 2 > 5_000_000 ? nil : rate * 2 }
        if low == 0 { return rate / 2 >= 100 ? (rate / 2).rounded() : nil }
        return high - low > high * 0.1 ? ((low + high) / 2).rounded() : nil
    }

    /// Doubles the rate until a trial does not hold (halves it while none has), then halves the gap. The outcome
    /// is the fastest trial that held (for the floor, its result is in `floor`).
    func search(label: String, _ trial: (Double) throws -> (TrialResult, ProcessUsage)) throws -> (outcome: BenchOutcome, usage: ProcessUsage) {
        var steps: [BenchReport.SearchStep] = []
        var best: (rate: Double, result: TrialResult, usage: ProcessUsage)?
        var low = 0.0, high = Double.infinity, rate = options.rate
        for _ in 0..<16 {
            let (result, usage) = try trial(rate)
            let held = BenchSession.held(result, rate: rate)
            steps.append(.init(rateTarget: rate, rateAchieved: result.rateAchieved, lost: result.lost, e2eP99Us: result.e2e.stats.p99Us, held: held))
            BenchSession.progress(
                "\(label): \(BenchReport.rate(rate)) \(held ? "held" : "did not hold") (achieved \(BenchReport.rate(result.rateAchieved)), lost \(result.lost))"
            )
            if held {
                low = rate
                if rate > (best?.rate ?? -.infinity) { best = (rate, result, usage) }
            } else {
                high = rate
            }
            guard let next = BenchSession.nextSearchRate(rate, low: low, high: high) else { break }
            rate = next
        }
        let chosen = best ?? (rate, TrialResult(), ProcessUsage())
        var outcome = BenchOutcome(report: report(rate: chosen.rate, result: chosen.result, usage: chosen.usage, floor: nil), result: chosen.result)
        outcome.report.search = steps
        return (outcome, chosen.usage)
    }

    func report(rate: Double, result: TrialResult, usage: ProcessUsage, floor: TrialResult?) -> BenchReport {
        let setup = BenchReport.Setup(
            transport: options.attach != nil ? "attached" : options.transport.rawValue, stores: workloadStores.count, views: options.views,
            clients: options.clients, codec: options.codec.rawValue, fsync: options.attach != nil ? "cluster's" : options.fsync.rawValue,
            payloadBytes: options.payloadBytes, stateItems: options.stateItems, durationS: options.duration, warmUpS: options.warmUp,
            workload: workload.name, rampS: workload.rampSeconds > 0 ? workload.rampSeconds : nil, actions: workload.shares)
        let bytes = viewLogs.compactMap(\.meanUpdateBytes)
        return BenchReport(
            setup: setup, rateTarget: rate, result: result, cpuSeconds: usage.cpuSeconds, contextSwitches: usage.contextSwitches, floor: floor,
            stateUpdateBytes: bytes.isEmpty ? nil : bytes.reduce(0, +) / Double(bytes.count))
    }

    /// One open-loop run against the cluster: (result, what each process used).
    func trial(rate: Double) throws -> (TrialResult, ProcessUsage) {
        let schedule = OpenLoopSchedule(rate: rate, seconds: options.duration + options.warmUp, ramp: workload.rampSeconds)
        let mix = try mix(actions: schedule.count)
        var client = LoadClient(intake: topology.dispatcher.intake, mix: mix, clients: options.clients)
        client.security = security
        feed?.trial(rate: rate, label: "zflux")
        // The search's trials report no syncs: none of them asks.
        let syncsBefore = options.max ? nil : journalSyncs()
        let before = usageNow()
        let log = try drive(client, schedule, logs: viewLogs) { self.start.set($0) }
        let usage = usageNow().since(before)
        lastJournalSyncs = options.max ? nil : BenchReport.JournalSyncs(before: syncsBefore, after: journalSyncs(), actions: log.log.sent)
        let startWall = log.startWall
        var result = Accounting.evaluate(
            log.log, subscribers: viewLogs.map(\.all), apps: (viewLogs.map(\.app), mix.kinds.map(\.app)), warmUp: UInt64(options.warmUp * 1e9),
            startWall: startWall)
        Accounting.countStoreRefusals(&result, log: log.log, refusals: viewLogs.map(\.refused))
        return (result, usage)
    }

    struct Driven { var log: TrialLog; var startWall: Int64 }

    /// The dispatcher's status, for its journal's syncs (nil: no answer within a second).
    func journalSyncs() -> NodeStatus? {
        nodeStatus(endpoint: topology.dispatcher.intake, security: security, timeoutMilliseconds: 1000)
    }

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
            BenchSession.progress(
                String(
                    format: "%5.1f s  sent %d of %d  answered %d  (%@)", Date().timeIntervalSince(began),
                    progressCounters.sent, schedule.count, progressCounters.acked, BenchReport.rate(schedule.rate)))
            writeSeconds(progressCounters, rate: schedule.rate)
        }
        writeSeconds(progressCounters, rate: schedule.rate)
        let log = try outcome.withLock { result in
            guard let result else { throw BenchError("the load client's thread ended without a result") }
            return try result.get()
        }
        let target = log.maxSeq
        let deadline = Date().addingTimeInterval(10)
        while logs.contains(where: { $0.latestVersion < target }) && Date() < deadline { usleep(2_000) }
        return Driven(log: log, startWall: startWall)
    }

    /// The seconds the load's thread closed since the last call, onto the live feed.
    func writeSeconds(_ progress: LoadProgress, rate: Double) {
        let seconds = progress.takeFinishedSeconds()
        guard let feed else { return }
        for second in seconds { feed.second(second, targetRate: rate, warmUp: Double(second.second + 1) <= options.warmUp) }
    }

    func usageNow() -> ProcessUsage {
        var pids = cluster?.nodePids ?? [:]
        pids["bench"] = getpid()
        return ProcessUsage.now(pids)
    }

    /// A line on stderr about how the run goes.
    static func progress(_ line: String) {
        StandardOutput.error(StandardOutput.programName + " bench: " + line + "\n")
    }

    public func shutdown() {
        for view in views { view.stop() }
        cluster?.stop()
        if ownsDirectory && options.attach == nil { try? FileManager.default.removeItem(atPath: directory) }
    }
}

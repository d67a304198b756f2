@_spi(Simulation) import FluxCore
import Foundation
import Logging
@_spi(Simulation) import NodeCores

/// One whole cluster, single-threaded, driven from one seed: a dispatcher with its journal on a
/// simulated disk, stores (a replica, a `waitFor` pair, an app with effects), a view per store and
/// clients that retry, on a simulated network. The dispatcher's, stores' and views' decisions are the
/// real cores (`DispatcherCore`, `StoreCore`, `ViewCore`, `StandbyCore`), and their commands are carried
/// out by the real loops' interpreters (`DispatcherInterpreter`, `StoreInterpreter`, `ViewInterpreter`,
/// `StandbyInterpreter`) against the simulation's network, disk and clock (its hosts) instead of sockets
/// and files. A dispatcher starts from its journal with `DispatcherBoot`, as `DispatcherLoop` does. The
/// simulator plays the I/O, schedules every message, timer, fsync and effect, and injects faults: crashes and restarts, power cuts
/// (unsynced writes lost, the last one torn, a sector corrupted), partitions, dropped, duplicated and
/// reordered messages, subscribers overflowing, frozen processes and clock jumps. The invariants of
/// the rules (docs/ARCHITECTURE.md) are checked all along; the first one broken ends the seed.
///
/// By concern: the network (`Simulation+Network`), each node's process with its host (`+Dispatcher`,
/// `+Store`, `+View`, `+Clients`, and the loop turns all of them share in `+Turns`), the
/// faults (`+Faults`), the invariants (`+Invariants`) and the trace (`+Trace`).
public final class Simulation {
    enum Node: Hashable {
        /// A dispatcher: the only one, or (with ``SimulationOptions/ha``) one of two.
        case dispatcher(Int)
        /// The lease service (etcd) the dispatchers of an HA run campaign at.
        case leaseService
        case store(Int)
        case view(Int)
        case client(Int)

        var code: UInt64 {
            switch self {
            case .dispatcher(let i): 1 + UInt64(i)
            case .leaseService: 9
            case .store(let i): 100 + UInt64(i)
            case .view(let i): 200 + UInt64(i)
            case .client(let i): 300 + UInt64(i)
            }
        }
    }

    enum Event {
        case deliver(to: Node, incarnation: UInt64, generation: UInt64, Delivery)
        case turn(Node, incarnation: UInt64)
        case timer(Node, incarnation: UInt64)
        case fsyncDone(dispatcher: Int, incarnation: UInt64, length: Int, through: UInt64, cuts: UInt64)
        /// A sync on one of a dispatcher's lanes returns (``SimSyncLanes``), unless its loop waited for it first.
        case syncLaneReturns(dispatcher: Int, incarnation: UInt64, lane: Int, token: UInt64)
        /// A dispatcher's lease clock is due (its next keepalive, or its lease running out), or a
        /// standby's next campaign.
        case leaseTimer(Int, incarnation: UInt64)
        /// The lease service's clock reaches a lease's expiry.
        case leaseExpiry(lease: UInt64)
        /// A crash planned by an earlier fault (HA: a rival's, while a leader's clock is stalled).
        case crash(Node)
        /// A dispatcher that stepped down is a standby again.
        case becomeStandby(Int, incarnation: UInt64)
        /// The operator starts a member it stopped, once the other one leads.
        case operatorStarts(Int)
        /// A standby whose journal had no room follows again from the journal's end.
        case standbyFollowsAgain(Int, incarnation: UInt64)
        case effect(store: Int, incarnation: UInt64, app: String, type: String, payload: [UInt8])
        case clientNext(Int)
        case clientRetry(Int)
        case fault
        case restart(Node)
        case linkUp(Node, Node)
        case chaosEnd
        case heal
        case check
    }

    // The world
    let seed: UInt64
    let options: SimulationOptions
    var rng: SplitMix64
    var queue = EventQueue<Event>()
    var now: UInt64 = 0
    let fsync: FsyncPolicy
    let apps: [String: any AnyApp]
    /// The cores' logs: silent, unless ZFLUX_SIMULATION_LOG names a level (to read what a failing seed did).
    let logger: Logger = {
        guard let level = ProcessInfo.processInfo.environment["ZFLUX_SIMULATION_LOG"].flatMap(Logger.Level.init(rawValue:)) else {
            return Logger(label: "zflux.simulation") { _ in SwiftLogNoOpLogHandler() }
        }
        var logger = Logger(label: "zflux.simulation") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = level
        return logger
    }()
    /// Every line of the trace to standard error as it happens (ZFLUX_SIMULATION_TRACE=1), to read
    /// what a seed did whether or not it fails.
    let echoesTrace = ProcessInfo.processInfo.environment["ZFLUX_SIMULATION_TRACE"] == "1"
    /// One dispatcher, or two with `ha`: the first is `dispatcher`.
    var dispatchers: [DispatcherProcess] = [DispatcherProcess(index: 0)]
    var dispatcher: DispatcherProcess { dispatchers[0] }
    let leaseService = LeaseService()
    var stores: [StoreProcess] = []
    var views: [ViewProcess] = []
    var clients: [ClientShell] = []
    var wallOffset: [Node: Int64] = [:]
    var downLinks: Set<[UInt64]> = []
    var chaos = false
    var healed = false
    var result: SimulationResult
    var hash = TraceHash()
    var trace: [String] = []

    // What the checker knows
    /// Every action that left the dispatcher (published or replayed), by seq: a seq never changes.
    /// (After a restart, recovered actions leave only by replay, so seqs may arrive out of order.)
    var history: [UInt64: Message] = [:]
    /// Client-acknowledged seqs: seq → (client id, client seq).
    var acknowledged: [UInt64: (client: UInt64, clientSeq: UInt64)] = [:]
    /// (client id, client seq) → seq it was acknowledged with.
    var ackedSeq: [[UInt64]: UInt64] = [:]
    var effectRuns: [Int: Int] = [:]
    /// A copy of the journal an operator took (for the "restore an older copy" fault), and its head.
    var backup: (journal: SimDisk, head: UInt64)?
    /// Every epoch the dispatcher has served, and those from before the latest restore: a store still
    /// following one of those is legitimately on the old history above `staleAbove` until it hears
    /// the new epoch; then it must rebuild.
    var epochsServed: Set<UInt64> = []
    var staleEpochs: Set<UInt64> = []
    /// The dispatcher's clock went back at some point: a restored older copy would then open an epoch
    /// older than one the stores saw, and they would take it for a dead dispatcher's (documented).
    var dispatcherClockWentBack = false
    /// An older copy of the journal was put back, and the dispatcher has not opened it yet.
    var restoredAwaitingStart = false
    var staleAbove: UInt64 = .max
    /// Versions that existed in a history an operator threw away: a view may still show them.
    var discardedVersions: ClosedRange<UInt64>?
    var nextPing = 1
    /// The pure reduction of `history` for each app, state by version.
    var reference: [String: (runtime: any AppRuntime, states: [[UInt8]])] = [:]
    /// HA: the dispatcher that ACKed in each epoch; every ACK sent (seq → dispatch); each leading
    /// epoch begun, with what its leader's journal held then (seq → dispatch).
    var ackedBy: [UInt64: Int] = [:]
    var acksSent: [UInt64: (client: UInt64, clientSeq: UInt64)] = [:]
    var epochStarts: [(epoch: UInt64, dispatcher: Int, held: [UInt64: [UInt64]])] = []
    /// HA, ``SimulationOptions/fromSingle``: the single dispatcher's history in dispatcher 1's journal,
    /// and the seqs it acknowledged.
    var singleHistory: UInt64?
    var singleHead: UInt64 = 0
    var singleSeqs: Set<UInt64> { singleHead == 0 ? [] : Set(1...singleHead) }
    /// HA: who leads, as each node last looked it up at the lease service.
    var leaderKnown: [Node: Int] = [:]
    /// The schedules the history makes, cancels and fires, as the checker follows them (`+Schedules`).
    var scheduleModel = ScheduleModel()
    /// Mixed into the echo app's pings to draw what their effects schedule: each seed its own.
    let echoSalt: UInt64

    public init(seed: UInt64, options: SimulationOptions) {
        self.seed = seed
        self.options = options
        // Drawn aside from `rng`, so that what it draws moves nothing else.
        var aside = SplitMix64(seed: seed ^ 0x5C4E_D01E_5C4E_D01E)
        self.echoSalt = aside.next()
        var rng = SplitMix64(seed: seed)
        let policies: [FsyncPolicy] = [.always, .batch, .batch, .none]
        self.fsync = policies[rng.int(0...(policies.count - 1))]
        self.rng = rng
        let echo = EchoApp(effectStarted: { _ in })
        var apps: [String: any AnyApp] = [:]
        for app in options.apps.apps + [echo] { apps[app.name] = app }
        self.apps = apps
        self.result = SimulationResult(seed: seed, fsync: fsync)
        // With poison, the echo app gets a replica too: both must skip the same poison actions.
        stores = (options.apps.stores + (options.poison ? [StoreSpec(name: "echo-replica", app: "echo", runsEffects: false)] : []))
            .map(StoreProcess.init)
        views = stores.indices.map(ViewProcess.init)
        clients = (0..<3).map { _ in ClientShell(id: rng.next() | 1) }
        precondition(options.ha || !options.fromSingle, "a pair started from a single dispatcher's journal is an HA run")
        if options.ha {
            dispatchers.append(DispatcherProcess(index: 1))
            for process in dispatchers { process.clock = DriftingClock(ppm: UInt64(rng.int(990_000...1_010_000))) }
            // The two machines' wall clocks disagree a little from the start, as NTP leaves them: a
            // schedule a leader made is due by the other's clock after a failover (clock jumps add more).
            for index in dispatchers.indices { wallOffset[.dispatcher(index)] = Int64(aside.int(-300...300)) * 1_000_000 }
        }
        self.rng = rng
        for app in apps.values { reference[app.name] = (app.makeRuntime(format: .binary) { _, _, _ in }, []) }
    }

    /// Runs the seed to the end, or to the first invariant broken.
    public func run() -> SimulationResult {
        for index in dispatchers.indices { watch(dispatchers[index].disk, of: index) }
        if options.ha {
            startHA()
        } else {
            startDispatcher()
        }
        for index in stores.indices { startStore(index) }
        for index in views.indices { startView(index) }
        for index in clients.indices { queue.schedule(.clientNext(index), at: rng.micros(1_000...20_000)) }
        queue.schedule(.fault, at: rng.micros(10_000...100_000))
        queue.schedule(.heal, at: options.faultPhaseMicros)
        while result.failure == nil, let (time, event) = queue.next() {
            now = time
            result.events += 1
            handle(event)
            if now > options.faultPhaseMicros + options.settleMicros && result.failure == nil {
                fail(
                    "liveness",
                    "not every store and view reached the head within \(options.settleMicros / 1_000_000) s of healing: \(convergenceReport())")
            }
        }
        result.simulatedMicros = now
        result.traceHash = hash.value
        result.head = leaderProcess?.core?.durableHead ?? 0
        result.actionsAcknowledged = acknowledged.count
        result.leadershipsWon = epochStarts.count
        result.syncFailures = dispatchers.reduce(0) { $0 + $1.disk.syncFailures }
        return result
    }

    // MARK: Events

    func handle(_ event: Event) {
        switch event {
        case .deliver(let node, let incarnation, let generation, let delivery):
            deliver(delivery, to: node, incarnation: incarnation, generation: generation)
        case .turn(let node, let incarnation):
            turn(node, incarnation: incarnation)
        case .timer(let node, let incarnation):
            timer(node, incarnation: incarnation)
        case .fsyncDone(let index, let incarnation, let length, let through, let cuts):
            fsyncDone(index, incarnation: incarnation, length: length, through: through, cuts: cuts)
        case .syncLaneReturns(let index, let incarnation, let lane, let token):
            syncLaneReturns(index, incarnation: incarnation, lane: lane, token: token)
        case .leaseTimer(let index, let incarnation):
            leaseTimer(index, incarnation: incarnation)
        case .leaseExpiry(let lease):
            leaseExpiry(lease)
        case .crash(let node):
            note("crash: \(name(of: node))")
            kill(node)
            queue.schedule(.restart(node), at: now + rng.micros(20_000...200_000))
        case .becomeStandby(let index, let incarnation):
            guard dispatchers[index].incarnation == incarnation, dispatchers[index].core != nil else { return }
            note("\(name(of: .dispatcher(index))) is a standby again")
            startStandby(index)
        case .standbyFollowsAgain(let index, let incarnation):
            standbyFollowsAgain(index, incarnation: incarnation)
        case .operatorStarts(let index):
            operatorStarts(index)
        case .effect(let index, let incarnation, let app, let type, let payload):
            effectAnswers(store: index, incarnation: incarnation, app: app, type: type, payload: payload)
        case .clientNext(let index):
            clientNext(index)
        case .clientRetry(let index):
            clientRetry(index)
        case .fault:
            injectFault()
            if now < options.faultPhaseMicros { queue.schedule(.fault, at: now + rng.micros(20_000...250_000)) }
        case .restart(let node):
            record(4, node.code, 0, "\(name(of: node)) restarts")
            restart(node)
        case .linkUp(let a, let b):
            downLinks.remove(Simulation.link(a, b))
        case .chaosEnd:
            chaos = false
        case .heal:
            healed = true
            chaos = false
            downLinks.removeAll()
            queue.schedule(.check, at: now + 100_000)
        case .check:
            if converged() {
                finalChecks()
                queue = EventQueue()
            } else {
                queue.schedule(.check, at: now + 100_000)
            }
        }
    }

    // MARK: Time

    /// A node's clocks: monotonic is simulated time; wall time may have jumped.
    func time(_ node: Node) -> NodeTime {
        NodeTime(milliseconds: now / 1000 + 1_000_000, wallNanoseconds: Int64(now) * 1000 + 1_790_000_000_000_000_000 + (wallOffset[node] ?? 0))
    }
}

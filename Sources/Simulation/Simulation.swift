@_spi(Simulation) import FluxCore
@_spi(Simulation) import FluxCores
import Foundation
import Logging

/// What to run: everything else comes from the seed.
public struct SimulationOptions: Sendable {
    /// A rule broken on purpose, to show the checker catches it.
    public var canary: BrokenRule? = nil
    /// How long faults are injected (simulated µs); then everything heals.
    public var faultPhaseMicros: UInt64 = 2_000_000
    /// How long, after healing, every store and view may take to reach the head.
    public var settleMicros: UInt64 = 30_000_000
    /// New actions each client sends during the fault phase.
    public var actionsPerClient = 30
    /// Keep a readable trace (slower; a failing seed is run again with it).
    public var traceLength = 0
    /// The apps under test and what the clients dispatch to them.
    public var apps: SimulatedApps

    public init(apps: SimulatedApps) { self.apps = apps }
}

/// The apps a simulation runs, and the mix of actions its clients draw from. Each app of the mix gets a
/// store of its own; the first also gets a replica without effects (replicas of one app must agree);
/// an echo app of the simulator's own, whose effects answer every ping, checks that effects run once.
public struct SimulatedApps: Sendable {
    /// The apps by name (the mix's apps, and any they read).
    public var apps: [any AnyApp]
    public var mix: ActionMix

    /// `apps` with `mix`; without a mix, every app's own examples (``ActionMix/examples(of:)``).
    public init(apps: [any AnyApp], mix: ActionMix? = nil) {
        self.apps = apps
        self.mix = mix ?? ActionMix.examples(of: apps)
    }

    /// The echo app's share of the draws.
    static let echoWeight = 3

    var stores: [Simulation.StoreSpec] {
        var specs: [Simulation.StoreSpec] = []
        for (index, app) in mix.apps.enumerated() {
            specs.append(.init(name: app, app: app, runsEffects: true))
            if index == 0 { specs.append(.init(name: app + "-replica", app: app, runsEffects: false)) }
        }
        return specs + [.init(name: "echo", app: "echo", runsEffects: true)]
    }
}

/// The first invariant a seed broke.
public struct SimulationFailure: Sendable, Equatable {
    public var invariant: String
    public var detail: String
    public var atMicros: UInt64
    /// The last events before it (when the run kept a trace).
    public var trace: [String]
}

/// What one seed did.
public struct SimulationResult: Sendable {
    public var seed: UInt64
    public var fsync: FsyncPolicy
    public var faultsInjected = 0
    public var invariantChecks = 0
    public var actionsAcknowledged = 0
    public var head: UInt64 = 0
    public var events = 0
    public var simulatedMicros: UInt64 = 0
    public var traceHash: UInt64 = 0
    public var failure: SimulationFailure?
}

/// One whole cluster, single-threaded, driven from one seed: a dispatcher with its journal on a
/// simulated disk, stores (a replica, a `waitFor` pair, an app with effects), a view per store and
/// clients that retry, on a simulated network. The dispatcher's, stores' and views' decisions are the
/// real cores (`DispatcherCore`, `StoreCore`, `ViewCore`); the simulator only plays their shells,
/// schedules every message, timer, fsync and effect, and injects faults: crashes and restarts, power
/// cuts (unsynced writes lost, the last one torn, a sector corrupted), partitions, dropped, duplicated
/// and reordered messages, subscribers overflowing, frozen processes and clock jumps. The invariants
/// of DESIGN §3 are checked all along; the first one broken ends the seed.
public final class Simulation {
    enum Node: Hashable {
        case dispatcher
        case store(Int)
        case view(Int)
        case client(Int)

        var code: UInt64 {
            switch self {
            case .dispatcher: 1
            case .store(let i): 100 + UInt64(i)
            case .view(let i): 200 + UInt64(i)
            case .client(let i): 300 + UInt64(i)
            }
        }
    }

    enum Delivery {
        case intake(peer: [UInt8], Message)
        case intakeReply(Message)
        case action(Message)
        case replayRequest(peer: [UInt8], Message)
        case replayReply(Message)
        case stateUpdate(Message)
        case snapshotRequest(peer: [UInt8], Message)
        case snapshotReply(Message)
    }

    enum Event {
        case deliver(to: Node, incarnation: UInt64, generation: UInt64, Delivery)
        case turn(Node, incarnation: UInt64)
        case timer(Node, incarnation: UInt64)
        case fsyncDone(incarnation: UInt64, length: Int, through: UInt64)
        case effect(store: Int, incarnation: UInt64, payload: [UInt8])
        case clientNext(Int)
        case clientRetry(Int)
        case fault
        case restart(Node)
        case linkUp(Node, Node)
        case chaosEnd
        case heal
        case check
    }

    struct StoreSpec {
        var name: String
        var app: String
        var runsEffects: Bool
    }

    final class DispatcherShell {
        var core: DispatcherCore?
        var incarnation: UInt64 = 0
        var journal = SimJournal()
        var fsyncInFlight = false
        var frozenUntil: UInt64 = 0
        var turnPending = false
        var timerAt: UInt64?
    }

    final class StoreShell {
        let spec: StoreSpec
        var core: StoreCore?
        var incarnation: UInt64 = 0
        /// Bumped when the store reconnects: what was in flight on the old subscription is gone.
        var generation: UInt64 = 0
        var snapshot: StoreSnapshot?
        var frozenUntil: UInt64 = 0
        var dropNext = 0
        var turnPending = false
        var timerAt: UInt64?
        var inbox = EffectInbox()
        /// Where the core's `.runEffects` start: the echo app's effects run inline, reporting to `inbox`.
        let effects = EffectTasks()
        init(spec: StoreSpec) { self.spec = spec }
    }

    final class ViewShell {
        let store: Int
        var core: ViewCore?
        var incarnation: UInt64 = 0
        /// Bumped when the view replaces its snapshot socket.
        var generation: UInt64 = 0
        var frozenUntil: UInt64 = 0
        var dropNext = 0
        var turnPending = false
        var timerAt: UInt64?
        var shown: UInt64 = 0
        var shownHistory: UInt64 = 0
        init(store: Int) { self.store = store }
    }

    final class ClientShell {
        let id: UInt64
        var nextClientSeq: UInt64 = 1
        var outstanding: [UInt64: (message: Message, sentAt: UInt64)] = [:]
        var issued = 0
        var retryScheduled = false
        init(id: UInt64) { self.id = id }
    }

    /// What an effect or a runtime reports from inside `apply`, drained by the store's shell right
    /// after. @unchecked: the simulation is single-threaded; the runtimes' callbacks are `@Sendable`
    /// only because the production ones are called from effect tasks.
    final class EffectInbox: @unchecked Sendable {
        var started: [Int] = []
        var delivered: [[UInt8]] = []
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
    let dispatcher = DispatcherShell()
    var stores: [StoreShell] = []
    var views: [ViewShell] = []
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
    var backup: (journal: SimJournal, head: UInt64)?
    /// Every epoch the dispatcher has served, and those from before the latest restore: a store still
    /// following one of those is legitimately on the old history above `staleAbove` until it hears
    /// the new epoch; then it must rebuild.
    var epochsServed: Set<UInt64> = []
    var staleEpochs: Set<UInt64> = []
    /// The dispatcher's clock went back at some point: a restored older copy would then open an epoch
    /// older than one the stores saw, and they would take it for a dead dispatcher's (documented).
    var dispatcherClockWentBack = false
    var staleAbove: UInt64 = .max
    /// Versions that existed in a history an operator threw away: a view may still show them.
    var discardedVersions: ClosedRange<UInt64>?
    var nextPing = 1
    /// The pure reduction of `history` for each app, state by version.
    var reference: [String: (runtime: any AppRuntime, states: [[UInt8]])] = [:]

    public init(seed: UInt64, options: SimulationOptions) {
        self.seed = seed
        self.options = options
        var rng = SplitMix64(seed: seed)
        let policies: [FsyncPolicy] = [.always, .batch, .batch, .none]
        self.fsync = policies[rng.int(0...(policies.count - 1))]
        self.rng = rng
        let echo = EchoApp(effectStarted: { _ in })
        var apps: [String: any AnyApp] = [:]
        for app in options.apps.apps + [echo] { apps[app.name] = app }
        self.apps = apps
        self.result = SimulationResult(seed: seed, fsync: fsync)
        stores = options.apps.stores.map(StoreShell.init)
        views = stores.indices.map(ViewShell.init)
        clients = (0..<3).map { _ in ClientShell(id: rng.next() | 1) }
        self.rng = rng
        for app in apps.values { reference[app.name] = (app.makeRuntime(format: .binary) { _, _, _ in }, []) }
    }

    /// Runs the seed to the end, or to the first invariant broken.
    public func run() -> SimulationResult {
        startDispatcher()
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
        result.head = dispatcher.core?.durableHead ?? 0
        result.actionsAcknowledged = acknowledged.count
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
        case .fsyncDone(let incarnation, let length, let through):
            record(2, 1, through, "journal durable through seq \(through)")
            guard let core = dispatcher.core, dispatcher.incarnation == incarnation else { return }
            dispatcher.journal.sync(upTo: length)
            dispatcher.fsyncInFlight = false
            core.durable(through: through)
            carryOutDispatcher()
            startFsyncIfNeeded()
        case .effect(let index, let incarnation, let payload):
            let store = stores[index]
            record(3, Node.store(index).code, UInt64(payload.count), "\(name(of: .store(index)))'s effect answers (\(payload.count) bytes)")
            guard let core = store.core, store.incarnation == incarnation else { return }
            core.effectSent(app: "echo", type: "pong", payload: payload, now: time(.store(index)))
            carryOutStore(index)
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

    func frozenUntil(_ node: Node) -> UInt64 {
        switch node {
        case .dispatcher: dispatcher.frozenUntil
        case .store(let i): stores[i].frozenUntil
        case .view(let i): views[i].frozenUntil
        case .client: 0
        }
    }

    // MARK: Network

    static func link(_ a: Node, _ b: Node) -> [UInt64] { [min(a.code, b.code), max(a.code, b.code)] }

    static func peerID(_ node: Node, _ incarnation: UInt64) -> [UInt8] {
        withUnsafeBytes(of: (node.code << 32 | incarnation).littleEndian) { Array($0) }
    }

    static func node(fromPeer peer: [UInt8]) -> (code: UInt64, incarnation: UInt64)? {
        guard peer.count == 8 else { return nil }
        let value = peer.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }.littleEndian
        return (value >> 32, value & 0xFFFF_FFFF)
    }

    func node(code: UInt64) -> Node? {
        switch code {
        case 1: .dispatcher
        case 100..<200: .store(Int(code - 100))
        case 200..<300: .view(Int(code - 200))
        case 300..<400: .client(Int(code - 300))
        default: nil
        }
    }

    func incarnation(of node: Node) -> UInt64 {
        switch node {
        case .dispatcher: dispatcher.incarnation
        case .store(let i): stores[i].incarnation
        case .view(let i): views[i].incarnation
        case .client: 1
        }
    }

    func generation(of node: Node, _ delivery: Delivery) -> UInt64 {
        switch (node, delivery) {
        case (.store(let i), .action): stores[i].generation
        case (.view(let i), .snapshotReply): views[i].generation
        default: 0
        }
    }

    /// Sends `delivery` from one node to another: latency, and in a chaos window drops, duplicates
    /// and reordering; nothing crosses a link that is down.
    func send(_ delivery: Delivery, from: Node, to: Node, incarnation: UInt64? = nil) {
        guard !downLinks.contains(Simulation.link(from, to)) else { return }
        if chaos && rng.chance(0.05) { return }
        let target = incarnation ?? self.incarnation(of: to)
        let generation = generation(of: to, delivery)
        var latency = rng.micros(50...600)
        if chaos { latency += rng.micros(0...5_000) }
        queue.schedule(.deliver(to: to, incarnation: target, generation: generation, delivery), at: now + latency)
        if chaos && rng.chance(0.03) {
            queue.schedule(.deliver(to: to, incarnation: target, generation: generation, delivery), at: now + latency + rng.micros(0...3_000))
        }
    }

    func deliver(_ delivery: Delivery, to node: Node, incarnation: UInt64, generation: UInt64) {
        let frozen = frozenUntil(node)
        if frozen > now {
            // Queued in the socket until the process runs again.
            queue.schedule(.deliver(to: node, incarnation: incarnation, generation: generation, delivery), at: frozen)
            return
        }
        switch node {
        case .dispatcher:
            guard let core = dispatcher.core, dispatcher.incarnation == incarnation else { return }
            switch delivery {
            case .intake(let peer, let message):
                record(
                    10, node.code, message.header.clientSeq,
                    "dispatcher receives DISPATCH from \(sender(of: message)) (client seq \(message.header.clientSeq))")
                core.receivedIntake(.success(message), from: peer, now: time(node))
            case .replayRequest(let peer, let message):
                record(11, node.code, message.header.seq, "dispatcher asked to replay from seq \(message.header.seq)")
                core.receivedReplayRequest(message, from: peer)
            default: return
            }
            scheduleTurn(node)
        case .store(let index):
            let store = stores[index]
            guard let core = store.core, store.incarnation == incarnation else { return }
            switch delivery {
            case .action(let message):
                guard generation == store.generation else { return }
                if store.dropNext > 0 {
                    store.dropNext -= 1
                    return
                }
                record(12, node.code, message.header.seq, "\(name(of: node)) receives \(message.kind) seq \(message.header.seq)")
                core.receivedFromDispatcher(message, now: time(node))
            case .replayReply(let message):
                record(13, node.code, message.header.seq, "\(name(of: node)) receives \(message.kind) seq \(message.header.seq)")
                if message.kind == .replayEnd {
                    note(
                        "store \(store.spec.name) at \(core.version) gets REPLAY-END \(message.header.seq) (history \(HistoryID(rawValue: message.header.history)))"
                    )
                }
                core.receivedReplay(message, now: time(node))
            case .snapshotRequest(let peer, let message):
                record(14, node.code, 0, "\(name(of: node)) asked for a snapshot")
                core.receivedRequest(message, from: peer, now: time(node))
            case .intakeReply(let message):
                record(15, node.code, message.header.seq, "\(name(of: node)) receives its effect's \(message.kind) seq \(message.header.seq)")
                core.receivedIntakeReply(message)
            default: return
            }
            carryOutStore(index)
            scheduleTurn(node)
        case .view(let index):
            let view = views[index]
            guard let core = view.core, view.incarnation == incarnation else { return }
            switch delivery {
            case .stateUpdate(let message):
                if view.dropNext > 0 {
                    view.dropNext -= 1
                    return
                }
                record(16, node.code, message.header.seq, "\(name(of: node)) receives \(message.kind) version \(message.header.seq)")
                core.receivedUpdate(message, now: time(node))
            case .snapshotReply(let message):
                guard generation == view.generation else { return }
                record(17, node.code, message.header.seq, "\(name(of: node)) receives SNAPSHOT version \(message.header.seq)")
                core.receivedSnapshot(message, now: time(node))
            default: return
            }
            scheduleTurn(node)
        case .client(let index):
            guard case .intakeReply(let message) = delivery else { return }
            record(18, node.code, message.header.seq, "\(name(of: node)) receives \(message.kind) seq \(message.header.seq)")
            clientReply(index, message)
        }
    }

    func scheduleTurn(_ node: Node) {
        switch node {
        case .dispatcher:
            guard !dispatcher.turnPending else { return }
            dispatcher.turnPending = true
        case .store(let i):
            guard !stores[i].turnPending else { return }
            stores[i].turnPending = true
        case .view(let i):
            guard !views[i].turnPending else { return }
            views[i].turnPending = true
        case .client: return
        }
        queue.schedule(.turn(node, incarnation: incarnation(of: node)), at: now)
    }

    /// The end of a drained burst: what the real loop does after its poll returns.
    func turn(_ node: Node, incarnation: UInt64) {
        switch node {
        case .dispatcher:
            dispatcher.turnPending = false
            guard let core = dispatcher.core, dispatcher.incarnation == incarnation else { return }
            core.endOfBurst()
            carryOutDispatcher()
        case .store(let index):
            stores[index].turnPending = false
            guard let core = stores[index].core, stores[index].incarnation == incarnation else { return }
            core.tick(now: time(node))
            carryOutStore(index)
        case .view(let index):
            views[index].turnPending = false
            guard let core = views[index].core, views[index].incarnation == incarnation else { return }
            core.endOfBurst()
            carryOutView(index)
        case .client: return
        }
    }

    func timer(_ node: Node, incarnation: UInt64) {
        let frozen = frozenUntil(node)
        if frozen > now {
            queue.schedule(.timer(node, incarnation: incarnation), at: frozen)
            return
        }
        switch node {
        case .dispatcher:
            guard let core = dispatcher.core, dispatcher.incarnation == incarnation else { return }
            dispatcher.timerAt = nil
            core.tick(now: time(node))
            carryOutDispatcher()
            scheduleTimer(node, deadlineMilliseconds: core.nextDeadline)
        case .store(let index):
            guard let core = stores[index].core, stores[index].incarnation == incarnation else { return }
            stores[index].timerAt = nil
            core.tick(now: time(node))
            carryOutStore(index)
            scheduleTimer(node, deadlineMilliseconds: core.nextDeadline)
        case .view(let index):
            guard let core = views[index].core, views[index].incarnation == incarnation else { return }
            views[index].timerAt = nil
            core.tick(now: time(node))
            carryOutView(index)
            scheduleTimer(node, deadlineMilliseconds: core.nextDeadline(now: time(node)))
        case .client: return
        }
    }

    func scheduleTimer(_ node: Node, deadlineMilliseconds: UInt64) {
        let deadline = max((deadlineMilliseconds - min(deadlineMilliseconds, 1_000_000)) * 1000, now + 1000)
        queue.schedule(.timer(node, incarnation: incarnation(of: node)), at: deadline)
    }

    // MARK: The dispatcher's shell

    func startDispatcher() {
        dispatcher.incarnation += 1
        dispatcher.fsyncInFlight = false
        dispatcher.turnPending = false
        let (records, _) = dispatcher.journal.recover(syncOnOpen: options.canary != .syncJournalOnOpen)
        checkJournal(records, when: "the dispatcher recovered its journal")
        var rules = DispatcherRules(apps: Array(apps.values))
        rules.heartbeatMilliseconds = 100
        rules.replayBatchSize = 16
        rules.replayBatchesPerRequest = 4
        if dispatcher.journal.cluster == 0 { dispatcher.journal.cluster = HistoryID.newCluster(using: &rng) }
        let history = HistoryID.opening(
            cluster: dispatcher.journal.cluster, previousEpoch: dispatcher.journal.lastEpoch, wallNanoseconds: time(.dispatcher).wallNanoseconds)
        dispatcher.journal.lastEpoch = history.epoch
        note("the dispatcher starts: journal head \(records.last?.header.seq ?? 0), history \(history)")
        epochsServed.insert(history.epoch)
        let core = DispatcherCore(
            rules: rules, head: records.last?.header.seq ?? 0, firstSeq: dispatcher.journal.firstSeq,
            history: history, now: time(.dispatcher), logger: logger)
        if let canary = options.canary { core.brokenRules = [canary] }
        for record in records.suffix(Int(DispatcherCore.dedupRecoveryRecords)) { core.remember(record.header) }
        dispatcher.core = core
        scheduleTimer(.dispatcher, deadlineMilliseconds: 0)
    }

    func carryOutDispatcher() {
        guard let core = dispatcher.core else { return }
        for command in core.takeCommands() {
            switch command {
            case .reply(let route, let peer, let message):
                guard let (code, incarnation) = Simulation.node(fromPeer: peer), let target = node(code: code) else { continue }
                switch route {
                case .intake: send(.intakeReply(message), from: .dispatcher, to: target, incarnation: incarnation)
                case .replay: send(.replayReply(message), from: .dispatcher, to: target, incarnation: incarnation)
                }
            case .replyStatus:
                continue
            case .publish(let message):
                if message.kind == .action { witness(message) }
                for index in stores.indices { send(.action(message), from: .dispatcher, to: .store(index)) }
            case .append(let actions):
                dispatcher.journal.append(actions)
                if fsync == .none {
                    if let last = actions.last { core.durable(through: last.header.seq) }
                } else {
                    startFsyncIfNeeded()
                }
            case .serveReplay(let plan):
                let journal = dispatcher.journal
                var read: [Message] = []
                let replies = plan.replies(
                    reading: { from, limit in
                        let slice = journal.read(from: from, limit: limit)
                        read += slice
                        return slice
                    }, logger: logger)
                for action in read { witness(action) }
                guard let (code, incarnation) = Simulation.node(fromPeer: plan.peer), let target = node(code: code) else { continue }
                for message in replies { send(.replayReply(message), from: .dispatcher, to: target, incarnation: incarnation) }
            }
        }
    }

    /// One fsync at a time; what is written meanwhile waits for the next (group commit).
    func startFsyncIfNeeded() {
        guard let core = dispatcher.core, !dispatcher.fsyncInFlight, core.head > core.durableHead else { return }
        guard dispatcher.journal.bytes.count > dispatcher.journal.durableLength || options.canary == .syncJournalOnOpen else { return }
        dispatcher.fsyncInFlight = true
        queue.schedule(
            .fsyncDone(incarnation: dispatcher.incarnation, length: dispatcher.journal.bytes.count, through: core.head),
            at: now + rng.micros(100...3_000))
    }

    // MARK: The stores' shell

    func startStore(_ index: Int) {
        let store = stores[index]
        store.incarnation += 1
        store.generation += 1
        store.turnPending = false
        let inbox = EffectInbox()
        store.inbox = inbox
        let spec = store.spec
        guard let app = apps[spec.app] else { return }
        var rules = StoreRules(name: spec.name, app: app)
        rules.heartbeatMilliseconds = 100
        rules.runsEffects = spec.runsEffects
        rules.writesSnapshots = true
        rules.snapshotEveryActions = 25
        let makeRuntime: () -> any AppRuntime = {
            if spec.app == "echo" {
                return EchoApp(effectStarted: { inbox.started.append($0) }).makeRuntime(format: .binary) { _, _, payload in
                    inbox.delivered.append(payload)
                }
            }
            return app.makeRuntime(format: .binary) { _, _, _ in }
        }
        let core = StoreCore(
            rules: rules, snapshot: store.snapshot, effectClientID: rng.next() | 1, now: time(.store(index)),
            logger: logger, makeRuntime: makeRuntime)
        if let canary = options.canary { core.brokenRules = [canary] }
        note(
            "\(spec.name) starts from \(store.snapshot.map { "a snapshot at \($0.version) (history \(HistoryID(rawValue: $0.history)))" } ?? "nothing")"
        )
        store.core = core
        core.start(now: time(.store(index)))
        carryOutStore(index)
        scheduleTimer(.store(index), deadlineMilliseconds: 0)
    }

    func carryOutStore(_ index: Int) {
        let store = stores[index]
        guard let core = store.core else { return }
        let node = Node.store(index)
        let commands = core.takeCommands()
        // Effects start first: the echo app's run inline and report to `inbox`, read next, before the other commands.
        for command in commands {
            if case .runEffects(let effects) = command { store.effects.run(effects) }
            if case .cancelEffects = command { store.effects.cancelAll() }
        }
        for ping in store.inbox.started {
            effectRuns[ping, default: 0] += 1
            result.invariantChecks += 1
            if effectRuns[ping]! > 1 {
                fail(
                    "effect ran twice",
                    "\(store.spec.name) ran the effect of ping \(ping) \(effectRuns[ping]!) times (replayed history must not run effects)")
            }
        }
        store.inbox.started.removeAll()
        for payload in store.inbox.delivered {
            queue.schedule(.effect(store: index, incarnation: store.incarnation, payload: payload), at: now + rng.micros(1_000...30_000))
        }
        store.inbox.delivered.removeAll()
        let peer = Simulation.peerID(node, store.incarnation)
        for command in commands {
            switch command {
            case .requestReplay(let message): send(.replayRequest(peer: peer, message), from: node, to: .dispatcher)
            case .publish(let message):
                if message.kind == .state && message.header.flags.contains(.fullState) {
                    checkStore(index, version: message.header.seq, state: message.payload)
                }
                for (viewIndex, view) in views.enumerated() where view.store == index {
                    send(.stateUpdate(message), from: node, to: .view(viewIndex))
                }
            case .reply(let target, let message):
                guard let (code, incarnation) = Simulation.node(fromPeer: target), let to = self.node(code: code) else { continue }
                note(
                    "store \(store.spec.name) answers a snapshot at \(message.header.seq) (history \(HistoryID(rawValue: message.header.history))) to \(self.name(of: to)) (incarnation \(incarnation))"
                )
                send(.snapshotReply(message), from: node, to: to, incarnation: incarnation)
            case .replyStatus, .runEffects, .cancelEffects: continue
            case .dispatch(let message): send(.intake(peer: peer, message), from: node, to: .dispatcher)
            case .reconnect:
                store.generation += 1
            case .writeSnapshot(let version, let history, let snapshot):
                // Written atomically and fsynced (tmp file, fsync, rename): whole or not at all.
                store.snapshot = StoreSnapshot(version: version, history: history, app: store.spec.app, state: snapshot)
                note("store \(store.spec.name) writes a snapshot at \(version) (history \(HistoryID(rawValue: history)))")
            }
        }
    }

    // MARK: The views' shell

    func startView(_ index: Int) {
        let view = views[index]
        view.incarnation += 1
        view.generation += 1
        view.turnPending = false
        view.shown = 0
        view.shownHistory = 0
        let spec = stores[view.store].spec
        // No app: these apps publish whole states, so the view needs no decoded replica.
        var rules = ViewRules(store: spec.name, app: nil)
        rules.heartbeatMilliseconds = 100
        let core = ViewCore(rules: rules, now: time(.view(index)), logger: logger)
        view.core = core
        core.start(now: time(.view(index)))
        carryOutView(index)
        scheduleTimer(.view(index), deadlineMilliseconds: 0)
    }

    func carryOutView(_ index: Int) {
        let view = views[index]
        guard let core = view.core else { return }
        let node = Node.view(index)
        for command in core.takeCommands() {
            switch command {
            case .requestSnapshot(let message):
                send(.snapshotRequest(peer: Simulation.peerID(node, view.incarnation), message), from: node, to: .store(view.store))
            case .replaceSnapshotSocket:
                view.generation += 1
            case .show(let update):
                note("view of \(update.store) shows \(update.version) (\(HistoryID(rawValue: update.history)), \(update.connection))")
                checkView(index, update)
            }
        }
    }

    // MARK: Clients

    func clientNext(_ index: Int) {
        let client = clients[index]
        guard now < options.faultPhaseMicros, client.issued < options.actionsPerClient else { return }
        if client.outstanding.count < 4 {
            client.issued += 1
            let (app, type, payload) = nextAction()
            let message = Message(
                topic: app,
                header: Header(kind: .dispatch, clientID: client.id, clientSeq: client.nextClientSeq, actionType: type), payload: payload)
            client.outstanding[client.nextClientSeq] = (message, now)
            client.nextClientSeq += 1
            send(.intake(peer: Simulation.peerID(.client(index), 1), message), from: .client(index), to: .dispatcher)
            if !client.retryScheduled {
                client.retryScheduled = true
                queue.schedule(.clientRetry(index), at: now + 200_000)
            }
        }
        queue.schedule(.clientNext(index), at: now + rng.micros(2_000...25_000))
    }

    func nextAction() -> (String, String, [UInt8]) {
        func payload(_ app: String, _ type: String, _ json: String) -> [UInt8] {
            (try? apps[app]?.wirePayload(type: type, argumentsJSON: Array(json.utf8), format: .binary)) ?? []
        }
        let mix = options.apps.mix
        let draw = rng.int(0...(mix.totalWeight + SimulatedApps.echoWeight - 1))
        guard let entry = mix.entry(at: draw) else {
            nextPing += 1
            return ("echo", "ping", Array("\(nextPing)".utf8))
        }
        let arguments = entry.arguments(&rng)
        return (entry.app, entry.type, payload(entry.app, entry.type, arguments))
    }

    func clientRetry(_ index: Int) {
        let client = clients[index]
        client.retryScheduled = false
        for (clientSeq, entry) in client.outstanding.sorted(by: { $0.key < $1.key }) where now - entry.sentAt >= 200_000 {
            client.outstanding[clientSeq]?.sentAt = now
            send(.intake(peer: Simulation.peerID(.client(index), 1), entry.message), from: .client(index), to: .dispatcher)
        }
        if !client.outstanding.isEmpty {
            client.retryScheduled = true
            queue.schedule(.clientRetry(index), at: now + 200_000)
        }
    }

    func clientReply(_ index: Int, _ reply: Message) {
        let client = clients[index]
        guard reply.header.clientID == client.id,
            client.outstanding.removeValue(forKey: reply.header.clientSeq) != nil
                || ackedSeq[[client.id, reply.header.clientSeq]] != nil
        else { return }
        guard reply.kind == .ack else { return }
        let seq = reply.header.seq
        // An ACK still in flight from a history the operator then threw away (a restore): not a promise now.
        if staleEpochs.contains(HistoryID(rawValue: reply.header.history).epoch) && seq > staleAbove { return }
        result.invariantChecks += 1
        if let first = ackedSeq[[client.id, reply.header.clientSeq]], first != seq {
            fail("dedup", "client \(client.id) dispatch \(reply.header.clientSeq) was acknowledged as seq \(first) and again as seq \(seq)")
            return
        }
        if let other = acknowledged[seq], other != (client.id, reply.header.clientSeq) {
            fail("sequencing", "seq \(seq) was acknowledged to two dispatches")
            return
        }
        ackedSeq[[client.id, reply.header.clientSeq]] = seq
        acknowledged[seq] = (client.id, reply.header.clientSeq)
    }

    // MARK: Faults

    func injectFault() {
        result.faultsInjected += 1
        let roll = rng.int(0...99)
        record(5, UInt64(roll), 0, "")  // the fault says what it is below
        switch roll {
        case 0..<25:
            let node = randomNode()
            note("crash: \(name(of: node))")
            kill(node)
            queue.schedule(.restart(node), at: now + rng.micros(20_000...400_000))
        case 25..<33 where fsync != .none:
            // `none` promises only to survive a process crash (docs/GUARANTEES.md).
            let what = dispatcher.journal.powerCut(&rng)
            note("power cut: \(what)")
            let all: [Node] = [.dispatcher] + stores.indices.map(Node.store) + views.indices.map(Node.view)
            for node in all {
                kill(node)
                queue.schedule(.restart(node), at: now + rng.micros(50_000...400_000))
            }
        case 33..<53:
            let a = randomNode(), b: Node = rng.chance(0.5) ? .dispatcher : .client(rng.int(0...(clients.count - 1)))
            guard a != b else { return }
            note("partition: \(name(of: a)) | \(name(of: b))")
            downLinks.insert(Simulation.link(a, b))
            queue.schedule(.linkUp(a, b), at: now + rng.micros(100_000...1_000_000))
        case 53..<68:
            note("chaos: drops, duplicates, reordering")
            chaos = true
            queue.schedule(.chaosEnd, at: now + rng.micros(100_000...500_000))
        case 68..<78:
            let count = rng.int(20...200)
            if rng.chance(0.5) {
                let i = rng.int(0...(stores.count - 1))
                note("\(name(of: .store(i))) falls past its high-water mark: \(count) actions dropped")
                stores[i].dropNext = count
            } else {
                let i = rng.int(0...(views.count - 1))
                note("\(name(of: .view(i))) falls past its high-water mark: \(count) updates dropped")
                views[i].dropNext = count
            }
        case 78..<81:
            // An operator backs the journal up (copies the directory).
            // A copy of the directory takes what the page cache holds too: its head is its last record.
            guard dispatcher.core != nil else { return }
            let head = dispatcher.journal.scan().records.last?.header.seq ?? 0
            note("backup of the journal at head \(head)")
            backup = (dispatcher.journal, head)
        case 81..<84:
            guard let (copy, head) = backup, let current = dispatcher.core?.durableHead, head < current, !dispatcherClockWentBack else { return }
            restoreOlderCopy(copy, head: head, replacing: current)
        case 84..<90:
            let node = randomNode()
            let jump = Int64(rng.int(-3_600...3_600)) * 1_000_000_000
            note("clock jump on \(name(of: node)): \(jump / 1_000_000_000) s")
            if node == .dispatcher && jump < 0 { dispatcherClockWentBack = true }
            wallOffset[node, default: 0] += jump
        default:
            let node = randomNode()
            let until = now + rng.micros(200_000...3_000_000)
            note("freeze \(name(of: node)) for \((until - now) / 1000) ms")
            switch node {
            case .dispatcher: dispatcher.frozenUntil = until
            case .store(let i): stores[i].frozenUntil = until
            case .view(let i): views[i].frozenUntil = until
            case .client: break
            }
        }
    }

    /// The operator stops the dispatcher, puts back an older copy of its journal and starts it again:
    /// what was acknowledged after the copy is gone (the operator's choice), and its seqs are given
    /// again. Every store must notice (a new epoch starting at or below its version) and rebuild.
    func restoreOlderCopy(_ copy: SimJournal, head: UInt64, replacing current: UInt64) {
        note("the journal is restored from a copy at head \(head) (it was at \(current))")
        kill(.dispatcher)
        dispatcher.journal = copy
        // The operator's restore ends with `sync` (docs/OPERATIONS.md): the copied files are on the disk.
        dispatcher.journal.sync()
        for (seq, action) in history where seq > head {
            // A ping whose sequencing is thrown away may be sent again and sequenced anew: its effect
            // may run once more, for the new sequencing (at most once per sequenced action).
            if action.topicString == "echo" && action.header.actionType == "ping", let ping = Int(String(decoding: action.payload, as: UTF8.self)) {
                effectRuns[ping] = nil
            }
            history[seq] = nil
        }
        for (seq, dispatch) in acknowledged where seq > head {
            acknowledged[seq] = nil
            ackedSeq[[dispatch.client, dispatch.clientSeq]] = nil
        }
        for (app, entry) in reference where entry.states.count > Int(head) + 1 {
            // Built from actions that are gone: rebuilt from the history as it is now.
            reference[app] = (apps[app]!.makeRuntime(format: .binary) { _, _, _ in }, [])
        }
        staleEpochs.formUnion(epochsServed)
        staleAbove = min(staleAbove, head)
        let newest = max(current, discardedVersions?.upperBound ?? 0)
        discardedVersions = min(head + 1, discardedVersions?.lowerBound ?? .max)...newest
        queue.schedule(.restart(.dispatcher), at: now + rng.micros(20_000...200_000))
    }

    func randomNode() -> Node {
        switch rng.int(0...9) {
        case 0...2: .dispatcher
        case 3...7: .store(rng.int(0...(stores.count - 1)))
        default: .view(rng.int(0...(views.count - 1)))
        }
    }

    func kill(_ node: Node) {
        switch node {
        case .dispatcher: dispatcher.core = nil
        case .store(let i): stores[i].core = nil
        case .view(let i): views[i].core = nil
        case .client: break
        }
    }

    func restart(_ node: Node) {
        switch node {
        case .dispatcher: if dispatcher.core == nil { startDispatcher() }
        case .store(let i): if stores[i].core == nil { startStore(i) }
        case .view(let i): if views[i].core == nil { startView(i) }
        case .client: break
        }
    }

    // MARK: Invariants

    /// An action left the dispatcher: a seq, once given, always names the same action.
    func witness(_ action: Message) {
        let seq = action.header.seq
        guard seq >= 1 else { return }
        result.invariantChecks += 1
        guard let known = history[seq] else {
            history[seq] = action
            return
        }
        if known.payload != action.payload || known.topic != action.topic || known.header.clientID != action.header.clientID
            || known.header.clientSeq != action.header.clientSeq
        {
            fail("one history", "seq \(seq) was sent as two different actions: stores that applied the first now hold another history")
        }
    }

    /// The state `app` has after the first `version` actions of the history.
    func referenceState(_ app: String, _ version: UInt64) -> [UInt8]? {
        guard var entry = reference[app] else { return nil }
        if entry.states.isEmpty, let initial = try? entry.runtime.encodedState() { entry.states.append(initial) }
        while entry.states.count <= Int(version) {
            guard let action = history[UInt64(entry.states.count)] else {
                reference[app] = entry
                return nil
            }
            _ = try? entry.runtime.apply(
                app: action.topicString, actionType: action.header.actionType, payload: action.payload,
                stamp: Stamp(seq: action.header.seq, wallNanoseconds: action.header.timestamp), runEffects: false)
            entry.states.append((try? entry.runtime.encodedState()) ?? [])
        }
        reference[app] = entry
        return entry.states[Int(version)]
    }

    /// A store's state is the pure reduction of the history up to its version: checked on every whole
    /// state it publishes (once per burst that changed its version), and at the end.
    func checkStore(_ index: Int, version: UInt64? = nil, state: [UInt8]? = nil) {
        let store = stores[index]
        guard let core = store.core else { return }
        let version = version ?? core.version
        // Still on a history from before a restore (it has not heard the new epoch yet): not checked
        // against the new one. Once it follows the new epoch, every state it shows is.
        if let epoch = core.history?.epoch, staleEpochs.contains(epoch), version > staleAbove { return }
        result.invariantChecks += 1
        guard let expected = referenceState(store.spec.app, version) else {
            fail(
                "one history",
                "\(store.spec.name) is at version \(version) (history \(core.history.map { "\($0)" } ?? "none")), but the dispatcher "
                    + "(history \(dispatcher.core.map { "\($0.history)" } ?? "down")) never sent some action up to it")
            return
        }
        let actual = state ?? (try? core.encodedState()) ?? []
        if actual != expected {
            fail(
                "state = reduction of the journal",
                "\(store.spec.name) at version \(version) holds \(readable(store.spec.app, actual)); the journal's prefix reduces to \(readable(store.spec.app, expected))"
            )
        }
    }

    func readable(_ app: String, _ state: [UInt8]) -> String {
        let json = (try? apps[app]?.stateJSON(fromWire: state)) ?? state
        return String(decoding: json.prefix(300), as: UTF8.self)
    }

    /// A view never goes back, and shows the store's state at the version it claims.
    func checkView(_ index: Int, _ update: ViewUpdate) {
        let view = views[index]
        result.invariantChecks += 1
        // Within one history a view never goes back; an operator's restore of an older journal copy
        // rewinds the history, and then the view follows the store back.
        let rewound = discardedVersions != nil && HistoryID(rawValue: update.history).epoch > HistoryID(rawValue: view.shownHistory).epoch
        // How far a view says it is current never goes back. (The version of the last change may: a store
        // that rebuilt in a newer history can have its last change lower in it, current through as far.)
        if update.currentThrough < view.shown && !rewound {
            fail("views never go back", "view of \(update.store) was current through \(view.shown), then through \(update.currentThrough)")
            return
        }
        view.shown = update.currentThrough
        view.shownHistory = update.history
        let app = stores[view.store].spec.app
        if let discarded = discardedVersions, discarded.contains(update.version) { return }
        if let expected = referenceState(app, update.version), expected != update.state {
            fail("views show the reduction", "view of \(update.store) shows at version \(update.version) a state the journal does not reduce to")
            return
        }
        // A store publishes only changes; its heartbeats say its state is still current through a later
        // version. That claim must hold too: the journal reduces to the same state there.
        if update.currentThrough > update.version, discardedVersions.map({ !$0.contains(update.currentThrough) }) ?? true,
            let expected = referenceState(app, update.currentThrough), expected != update.state
        {
            fail(
                "views show the reduction",
                "view of \(update.store) shows version \(update.version) as current through \(update.currentThrough), but the state changed in between"
            )
        }
    }

    /// Every acknowledged action is in the journal as it is now (after a crash or power cut), each
    /// dispatch in it once.
    func checkJournal(_ records: [Message], when: String) {
        result.invariantChecks += 1
        var bySeq: [UInt64: Message] = [:]
        var seen = Set<[UInt64]>()
        for record in records {
            bySeq[record.header.seq] = record
            if record.header.clientID != 0 && !seen.insert([record.header.clientID, record.header.clientSeq]).inserted {
                fail("dedup", "client \(record.header.clientID) dispatch \(record.header.clientSeq) is in the journal twice (\(when))")
                return
            }
        }
        for (seq, dispatch) in acknowledged.sorted(by: { $0.key < $1.key }) {
            guard let record = bySeq[seq], record.header.clientID == dispatch.client, record.header.clientSeq == dispatch.clientSeq else {
                fail(
                    "ACK means durable",
                    "seq \(seq) was acknowledged to client \(dispatch.client) but is not in the journal (\(when), fsync \(fsync.rawValue))")
                return
            }
        }
    }

    /// Once faults heal: every client answered, every store at the head, every view at its store's version.
    func converged() -> Bool {
        guard let core = dispatcher.core, dispatcher.frozenUntil <= now else { return false }
        guard clients.allSatisfy({ $0.outstanding.isEmpty }), core.head == core.durableHead else { return false }
        for (index, store) in stores.enumerated() {
            guard let storeCore = store.core, store.frozenUntil <= now, storeCore.version == core.durableHead, storeCore.caughtUp,
                !storeCore.hasUnpublishedChanges,
                storeCore.status(now: time(.store(index)), subscribers: 0, pid: 0).effectsUnanswered == 0
            else { return false }
        }
        for view in views {
            guard let viewCore = view.core, viewCore.connection == .live, let storeCore = stores[view.store].core,
                viewCore.currentThrough == storeCore.version
            else { return false }
        }
        return true
    }

    func convergenceReport() -> String {
        var parts = ["dispatcher head \(dispatcher.core.map { "\($0.durableHead)" } ?? "down")"]
        parts += stores.map {
            "\($0.spec.name) \($0.core.map { "\($0.version) (published \($0.lastPublishedVersion))\($0.caughtUp ? "" : " catching up")" } ?? "down")"
        }
        parts += views.map {
            "view \(stores[$0.store].spec.name) \($0.core.map { "\($0.version) (current through \($0.currentThrough)) \($0.connection) \(HistoryID(rawValue: $0.history))" } ?? "down")"
        }
        parts += clients.map { "client \($0.outstanding.count) unanswered" }
        return parts.joined(separator: ", ")
    }

    func finalChecks() {
        checkJournal(dispatcher.journal.scan().records, when: "at the end")
        for index in stores.indices { checkStore(index) }
    }

    // MARK: Trace

    /// One event: mixed into the trace hash as numbers (so a seed's hash stays what it was), kept in
    /// the trace as the sentence `text`.
    func record(_ kind: UInt64, _ a: UInt64, _ b: UInt64, _ text: @autoclosure () -> String) {
        hash.mix(now)
        hash.mix(kind << 48 | a)
        hash.mix(b)
        guard options.traceLength > 0 else { return }
        let line = text()
        if !line.isEmpty { note(line) }
    }

    /// Who sent a DISPATCH: a client by its index, or a store's effects.
    func sender(of message: Message) -> String {
        if let index = clients.firstIndex(where: { $0.id == message.header.clientID }) { return "client \(index)" }
        return "client id \(message.header.clientID)"
    }

    /// A node as the trace names it: `dispatcher`, `store todo`, `view of stats`, `client 2`.
    func name(of node: Node) -> String {
        switch node {
        case .dispatcher: "dispatcher"
        case .store(let index): "store \(stores[index].spec.name)"
        case .view(let index): "view of \(stores[views[index].store].spec.name)"
        case .client(let index): "client \(index)"
        }
    }

    func note(_ text: @autoclosure () -> String) {
        guard options.traceLength > 0 else { return }
        trace.append("\(now / 1000).\(String(format: "%03d", now % 1000)) ms  \(text())")
        if trace.count > options.traceLength { trace.removeFirst(trace.count - options.traceLength) }
    }

    func fail(_ invariant: String, _ detail: String) {
        guard result.failure == nil else { return }
        result.failure = SimulationFailure(invariant: invariant, detail: detail, atMicros: now, trace: trace)
    }
}

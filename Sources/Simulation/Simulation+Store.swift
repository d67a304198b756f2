@_spi(Simulation) import FluxCore
@_spi(Simulation) import NodeCores

/// A store in the simulation: the real `StoreCore`, fed what arrives on its sockets, and the real
/// loop's interpreter (``StoreInterpreter``, which `StoreLoop` runs too) carrying out its commands on
/// the simulated network (``StoreHost``); its snapshot file is written whole or not at all, as the
/// real one is (tmp file, fsync, rename). The echo app's effects answer after a while, and every
/// effect started is counted (an effect must run at most once).
extension Simulation {
    struct StoreSpec {
        var name: String
        var app: String
        var runsEffects: Bool
    }

    final class StoreProcess {
        let spec: StoreSpec
        /// The real interpreter, over the core, while the store runs.
        var interpreter: StoreInterpreter?
        var core: StoreCore? { interpreter?.core }
        /// What the interpreter reaches: this simulation's network and disk.
        var host: StoreHost?
        var incarnation: UInt64 = 0
        /// Bumped when the store reconnects: what was in flight on the old subscription is gone.
        var generation: UInt64 = 0
        var snapshot: StoreSnapshot?
        var frozenUntil: UInt64 = 0
        var dropNext = 0
        var turnPending = false
        /// The dispatcher it sends to (HA: the leader, as it last looked it up).
        var target = 0
        var inbox = EffectInbox()
        /// Where the core's `.runEffects` start: the echo app's effects run inline, reporting to `inbox`.
        let effects = EffectTasks()
        /// With poison on: the seq a poison action "trapped" on in this incarnation (the store is dead).
        let trapped = TrapBox()
        /// What the real store's crash marker keeps: the seq it last died on, and how many times in a row.
        var lastCrash: (seq: UInt64, count: Int) = (0, 0)
        init(spec: StoreSpec) { self.spec = spec }
    }

    /// Where a poison action reports the trap from inside `apply`. @unchecked: the simulation is single-threaded.
    final class TrapBox: @unchecked Sendable {
        var seq: UInt64?
    }

    /// Every 23rd echo ping (by its number) is poison when ``SimulationOptions/poison`` is on.
    static func isPoison(app: String, actionType: String, payload: [UInt8]) -> Bool {
        app == "echo" && actionType == "ping" && (Int(String(decoding: payload, as: UTF8.self)) ?? 0) % 23 == 7
    }

    /// What an effect or a runtime reports from inside `apply`, drained by the store's shell right
    /// after. @unchecked: the simulation is single-threaded; the runtimes' callbacks are `@Sendable`
    /// only because the production ones are called from effect tasks.
    final class EffectInbox: @unchecked Sendable {
        var started: [Int] = []
        /// What effects sent, to go to the dispatcher: (app or reserved topic, action type, payload).
        var delivered: [(app: String, type: String, payload: [UInt8])] = []
    }

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
        store.trapped.seq = nil
        let trapped = store.trapped, poison = options.poison, salt = echoSalt
        let makeRuntime: () -> any AppRuntime = {
            let runtime: any AppRuntime
            if spec.app == "echo" {
                runtime = EchoApp(effectStarted: { inbox.started.append($0) }, salt: salt).makeRuntime(format: .binary) { app, type, payload in
                    inbox.delivered.append((app, type, payload))
                }
            } else {
                runtime = app.makeRuntime(format: .binary) { _, _, _ in }
            }
            // Only the echo app's reducer meets its actions; another app's store never runs it.
            guard poison && spec.app == "echo" else { return runtime }
            // Its reducer "traps" on a poison action: the shell sees it and kills the store, as a real
            // trap would, before anything of that turn leaves it.
            return InterceptedRuntime(runtime) { app, actionType, payload, stamp in
                guard trapped.seq == nil else { return false }
                guard !Simulation.isPoison(app: app, actionType: actionType, payload: payload) else {
                    trapped.seq = stamp.seq
                    return false
                }
                return true
            }
        }
        let core = StoreCore(
            rules: rules, snapshot: store.snapshot, effectClientID: rng.next() | 1, now: time(.store(index)),
            logger: logger, makeRuntime: makeRuntime)
        if let canary = options.canary { core.brokenRules = [canary] }
        core.onBrokenInvariant = { [unowned self] in fail("core invariant", "\(spec.name)'s core: \($0)") }
        note(
            "\(spec.name) starts from \(store.snapshot.map { "a snapshot at \($0.version) (history \(HistoryID(rawValue: $0.history)))" } ?? "nothing")"
        )
        let host = StoreHost(simulation: self, index: index)
        // As the real store does: so many deaths in a row on one seq, and it asks for a quarantine.
        let asked = StoreInterpreter.quarantineToAsk(diedAt: store.lastCrash.seq, times: UInt64(store.lastCrash.count)) { "died \($0) times" }
        store.host = host
        store.interpreter = StoreInterpreter(
            core: core, io: host, logger: logger, name: spec.name, app: spec.app, effectToken: 0, quarantineAsked: asked)
        core.start(now: time(.store(index)))
        carryOutStore(index)
        scheduleTimer(.store(index), deadlineMilliseconds: 0)
    }

    func carryOutStore(_ index: Int) {
        let store = stores[index]
        guard store.interpreter != nil else { return }
        let node = Node.store(index)
        if let seq = store.trapped.seq {
            // The reducer trapped: the process is gone with everything of this turn; the supervisor
            // starts it again. Its crash marker counts the deaths on this seq.
            store.lastCrash = store.lastCrash.seq == seq ? (seq, store.lastCrash.count + 1) : (seq, 1)
            result.poisonCrashes += 1
            note("\(store.spec.name) traps on seq \(seq) (\(store.lastCrash.count) in a row) and dies")
            store.interpreter = nil
            queue.schedule(.restart(node), at: now + rng.micros(50_000...300_000))
            return
        }
        guard let interpreter = store.interpreter else { return }
        do {
            try interpreter.carryOut()
        } catch {
            fail("store", "\(store.spec.name) could not carry out its core's commands: \(error)")
        }
        // The echo app's effects ran inline (`.runEffects`) and reported to `inbox`.
        for ping in store.inbox.started {
            let runs = effectRuns[ping, default: 0] + 1
            effectRuns[ping] = runs
            result.invariantChecks += 1
            if runs > 1 {
                fail(
                    "effect ran twice",
                    "\(store.spec.name) ran the effect of ping \(ping) \(runs) times (replayed history must not run effects)")
            }
        }
        store.inbox.started.removeAll()
        for sent in store.inbox.delivered {
            queue.schedule(
                .effect(store: index, incarnation: store.incarnation, app: sent.app, type: sent.type, payload: sent.payload),
                at: now + rng.micros(1_000...30_000))
        }
        store.inbox.delivered.removeAll()
    }

    func storeReceives(_ delivery: Delivery, store index: Int, incarnation: UInt64, generation: UInt64) {
        let store = stores[index]
        let node = Node.store(index)
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
    }

    /// The echo app's effect answers: its action (a pong, or a schedule's request or cancel) goes to
    /// the dispatcher, as an effect's does.
    func effectAnswers(store index: Int, incarnation: UInt64, app: String, type: String, payload: [UInt8]) {
        let store = stores[index]
        record(
            3, Node.store(index).code, UInt64(payload.count),
            "\(name(of: .store(index)))'s effect sends \(app).\(type) (\(payload.count) bytes)")
        guard let core = store.core, store.incarnation == incarnation else { return }
        core.effectSent(app: app, type: type, payload: payload, now: time(.store(index)))
        carryOutStore(index)
    }
}

/// What a store's interpreter reaches in the simulation: the network (to the dispatcher the lease
/// service names, with HA) and the simulated disk, where a snapshot is written whole or not at all.
final class StoreHost: SimulatedHost, StoreIO {
    var node: Simulation.Node { .store(index) }
    var store: Simulation.StoreProcess { simulation.stores[index] }
    var peer: [UInt8] { Simulation.peerID(node, store.incarnation) }
    /// A quarantine request goes to the dispatcher its replay request goes to.
    private var targetChosen = false

    func requestReplay(_ message: Message) {
        if !targetChosen { store.target = simulation.dispatcherTarget(for: node, current: store.target) }
        targetChosen = message.kind == .quarantineRequest
        simulation.send(.replayRequest(peer: peer, message), from: node, to: .dispatcher(store.target))
    }

    func publish(_ message: Message) {
        if message.kind == .state && message.header.flags.contains(.fullState) {
            simulation.checkStore(index, version: message.header.seq, state: message.payload)
        }
        for (viewIndex, view) in simulation.views.enumerated() where view.store == index {
            simulation.send(.stateUpdate(message), from: node, to: .view(viewIndex))
        }
    }

    func reply(to peer: [UInt8], _ message: Message) {
        guard let (code, incarnation) = Simulation.node(fromPeer: peer), let to = simulation.node(code: code) else { return }
        simulation.note(
            "store \(store.spec.name) answers a snapshot at \(message.header.seq) (history \(HistoryID(rawValue: message.header.history))) to \(simulation.name(of: to)) (incarnation \(incarnation))"
        )
        simulation.send(.snapshotReply(message), from: node, to: to, incarnation: incarnation)
    }

    func replyStatus(to peer: [UInt8]) {}

    func dispatch(_ message: Message) {
        store.target = simulation.dispatcherTarget(for: node, current: store.target)
        simulation.send(.intake(peer: peer, message), from: node, to: .dispatcher(store.target))
    }

    func runEffects(_ effects: PendingEffects) { store.effects.run(effects) }
    func cancelEffects() { store.effects.cancelAll() }
    /// What was in flight on the old subscription is gone.
    func reconnect() { store.generation += 1 }

    /// Written atomically and fsynced (tmp file, fsync, rename): whole or not at all.
    func writeSnapshot(_ snapshot: StoreSnapshot) {
        store.snapshot = snapshot
        simulation.note(
            "store \(store.spec.name) writes a snapshot at \(snapshot.version) (history \(HistoryID(rawValue: snapshot.history)))")
    }
}

@_spi(Simulation) import FluxCore
@_spi(Simulation) import NodeCores

/// A view in the simulation: the real `ViewCore`, fed its store's updates and snapshots, and the real
/// loop's interpreter (``ViewInterpreter``, which `ViewLoop` runs too) carrying out its commands on the
/// simulated network (``ViewHost``); every update it shows is checked (`checkView`).
extension Simulation {
    final class ViewProcess {
        let store: Int
        /// The real interpreter, over the core, while the view runs.
        var interpreter: ViewInterpreter?
        var core: ViewCore? { interpreter?.core }
        var host: ViewHost?
        var incarnation: UInt64 = 0
        /// Bumped when the view replaces its snapshot socket.
        var generation: UInt64 = 0
        var frozenUntil: UInt64 = 0
        var dropNext = 0
        var turnPending = false
        var shown: UInt64 = 0
        var shownHistory: UInt64 = 0
        init(store: Int) { self.store = store }
    }

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
        core.onBrokenInvariant = { [unowned self] in fail("core invariant", "view \(index)'s core: \($0)") }
        let host = ViewHost(simulation: self, index: index)
        view.host = host
        view.interpreter = ViewInterpreter(core: core, io: host)
        core.start(now: time(.view(index)))
        carryOutView(index)
        scheduleTimer(.view(index), deadlineMilliseconds: 0)
    }

    func carryOutView(_ index: Int) { views[index].interpreter?.carryOut() }

    func viewReceives(_ delivery: Delivery, view index: Int, incarnation: UInt64, generation: UInt64) {
        let view = views[index]
        let node = Node.view(index)
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
    }
}

/// What a view's interpreter reaches in the simulation: the network to its store, and the checker
/// every update it shows goes through.
final class ViewHost: SimulatedHost, ViewIO {
    var node: Simulation.Node { .view(index) }
    var view: Simulation.ViewProcess { simulation.views[index] }

    func requestSnapshot(_ message: Message) {
        simulation.send(.snapshotRequest(peer: Simulation.peerID(node, view.incarnation), message), from: node, to: .store(view.store))
    }

    /// What was in flight on the old socket is gone.
    func replaceSnapshotSocket() { view.generation += 1 }

    func show(_ update: ViewUpdate) {
        simulation.note("view of \(update.store) shows \(update.version) (\(HistoryID(rawValue: update.history)), \(update.connection))")
        simulation.checkView(index, update)
    }
}

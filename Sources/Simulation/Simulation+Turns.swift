import Journaling

/// What every simulated process shares with the real loops: a turn after each drained burst, a timer
/// at the core's next deadline, and a process that may be frozen or restarted (a new incarnation,
/// to which nothing sent to the old one is delivered). Each node's own process is in its file.
extension Simulation {
    func frozenUntil(_ node: Node) -> UInt64 {
        switch node {
        case .dispatcher(let i): dispatchers[i].frozenUntil
        case .leaseService: leaseService.frozenUntil
        case .store(let i): stores[i].frozenUntil
        case .view(let i): views[i].frozenUntil
        case .client: 0
        }
    }

    func incarnation(of node: Node) -> UInt64 {
        switch node {
        case .dispatcher(let i): dispatchers[i].incarnation
        case .leaseService: leaseService.incarnation
        case .store(let i): stores[i].incarnation
        case .view(let i): views[i].incarnation
        case .client: 1
        }
    }

    /// A turn of the node's loop right after this event, once for everything that arrives meanwhile.
    func scheduleTurn(_ node: Node) {
        switch node {
        case .dispatcher(let i):
            guard !dispatchers[i].turnPending else { return }
            dispatchers[i].turnPending = true
        case .store(let i):
            guard !stores[i].turnPending else { return }
            stores[i].turnPending = true
        case .view(let i):
            guard !views[i].turnPending else { return }
            views[i].turnPending = true
        case .client, .leaseService: return
        }
        queue.schedule(.turn(node, incarnation: incarnation(of: node)), at: now)
    }

    /// The end of a drained burst: what the real loop does after its poll returns.
    func turn(_ node: Node, incarnation: UInt64) {
        switch node {
        case .dispatcher(let i):
            dispatchers[i].turnPending = false
            guard dispatchers[i].incarnation == incarnation else { return }
            leaseCheck(i)
            guard let core = dispatchers[i].core else { return }
            // As the real loop's turn begins, the syncs that returned are told first.
            guard reportSyncs(i), dispatchers[i].core === core else { return }
            // As the real loop's turn begins: a standby whose queue was full is fed again from the log.
            dispatchers[i].interpreter?.newTurn()
            core.endOfBurst()
            carryOutDispatcher(i)
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
        case .client, .leaseService: return
        }
    }

    /// The core's deadline has come: the real loop's poll timing out.
    func timer(_ node: Node, incarnation: UInt64) {
        let frozen = frozenUntil(node)
        if frozen > now {
            queue.schedule(.timer(node, incarnation: incarnation), at: frozen)
            return
        }
        switch node {
        case .dispatcher(let i):
            guard dispatchers[i].incarnation == incarnation else { return }
            if let standby = dispatchers[i].standby {
                standby.tick(now: time(node))
                carryOutStandby(i)
                scheduleTimer(node, deadlineMilliseconds: standby.nextDeadlineMs(now: time(node)))
                return
            }
            leaseCheck(i)
            guard let interpreter = dispatchers[i].interpreter else { return }
            // The real loop's turn (``DispatcherInterpreter/turn()``), then what the host adds to it.
            let deadline: UInt64
            do {
                deadline = try interpreter.turn()
            } catch let error as JournalError {
                // A failed sync or a damaged journal: the node stops, as the real loop's thrown error
                // stops it, and starts again from its disk.
                startAgainLater(i, "its journal failed: \(error.message)")
                return
            } catch {
                fail("dispatcher", "\(name(of: node)) could not take its turn: \(error)")
                return
            }
            carryOutDispatcher(i)
            scheduleTimer(node, deadlineMilliseconds: deadline)
        case .store(let index):
            guard let core = stores[index].core, stores[index].incarnation == incarnation else { return }
            core.tick(now: time(node))
            carryOutStore(index)
            scheduleTimer(node, deadlineMilliseconds: core.nextDeadlineMs(now: time(node)))
        case .view(let index):
            guard let core = views[index].core, views[index].incarnation == incarnation else { return }
            core.tick(now: time(node))
            carryOutView(index)
            scheduleTimer(node, deadlineMilliseconds: core.nextDeadlineMs(now: time(node)))
        case .client, .leaseService: return
        }
    }

    /// A timer at a core's deadline (monotonic ms, as `time(_:)` gives them), a millisecond away at least.
    func scheduleTimer(_ node: Node, deadlineMilliseconds: UInt64) {
        let deadline = max((deadlineMilliseconds - min(deadlineMilliseconds, 1_000_000)) * 1000, now + 1000)
        queue.schedule(.timer(node, incarnation: incarnation(of: node)), at: deadline)
    }
}

/// What every node's host holds: the simulation whose network, disk and clock it reaches, and which
/// node of its kind it is. Each host adds the I/O protocol its node's interpreter is given.
class SimulatedHost {
    unowned let simulation: Simulation
    let index: Int

    init(simulation: Simulation, index: Int) {
        self.simulation = simulation
        self.index = index
    }
}

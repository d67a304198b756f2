@_spi(Simulation) import FluxCore
import Journaling

/// The faults a seed injects during its fault phase, one every 20–250 ms: crashes, power cuts,
/// partitions, chaos windows, subscribers past their high-water mark, journal backups and restores of
/// an older copy, clock jumps and frozen processes.
extension Simulation {
    func injectFault() {
        result.faultsInjected += 1
        if options.storageFaults && rng.chance(0.25) {
            injectStorageFault()
            return
        }
        if options.ha && rng.chance(0.3) {
            injectHAFault()
            return
        }
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
            for process in dispatchers {
                if process.syncLanes?.inFlight.isEmpty == false { result.lanes.powerCutsWhileInFlight += 1 }
                let what = process.disk.powerCut(&rng)
                note("power cut\(options.ha ? " (\(name(of: .dispatcher(process.index))))" : ""): \(what)")
            }
            let all: [Node] =
                dispatchers.indices.map(Node.dispatcher) + (options.ha ? [.leaseService] : []) + stores.indices.map(Node.store)
                + views.indices.map(Node.view)
            for node in all {
                kill(node)
                queue.schedule(.restart(node), at: now + rng.micros(50_000...400_000))
            }
        case 33..<53:
            let a = randomNode(), b: Node = rng.chance(0.5) ? randomDispatcher() : .client(rng.int(0...(clients.count - 1)))
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
            // An operator backs the journal up: a copy of the directory (under `none`, where no power
            // cut comes), or a snapshot of the volume (``SimDisk/copy(durable:)``); its head is its last record.
            guard dispatcher.core != nil, !options.ha else { return }
            let durable = fsync != .none
            let head = dispatcher.disk.records(in: Simulation.journalDirectory, durable: durable).last?.header.seq ?? 0
            note("backup of the journal at head \(head)")
            backup = (dispatcher.disk.copy(durable: durable), head)
        case 81..<84:
            guard !options.ha, let (copy, head) = backup, let current = dispatcher.core?.durableHead, head < current, !dispatcherClockWentBack else {
                return
            }
            restoreOlderCopy(copy, head: head, replacing: current)
        case 84..<90:
            let node = randomNode()
            var jump = Int64(rng.int(-3_600...3_600)) * 1_000_000_000
            // A restored journal's dispatcher that starts on a clock gone back opens an epoch older than
            // the ones the stores saw: a limit GUARANTEES names (fix the clock first), not played here.
            if node == .dispatcher(0) && restoredAwaitingStart { jump = abs(jump) }
            note("clock jump on \(name(of: node)): \(jump / 1_000_000_000) s")
            if node == .dispatcher(0) && jump < 0 { dispatcherClockWentBack = true }
            wallOffset[node, default: 0] += jump
        default:
            let node = randomNode()
            let until = now + rng.micros(200_000...3_000_000)
            note("freeze \(name(of: node)) for \((until - now) / 1000) ms")
            switch node {
            case .dispatcher(let i): dispatchers[i].frozenUntil = until
            case .leaseService: leaseService.frozenUntil = until
            case .store(let i): stores[i].frozenUntil = until
            case .view(let i): views[i].frozenUntil = until
            case .client: break
            }
        }
    }

    /// The operator stops the dispatcher, puts back an older copy of its journal and starts it again:
    /// what was acknowledged after the copy is gone (the operator's choice), and its seqs are given
    /// again. Every store must notice (a new epoch starting at or below its version) and rebuild.
    func restoreOlderCopy(_ copy: SimDisk, head: UInt64, replacing current: UInt64) {
        note("the journal is restored from a copy at head \(head) (it was at \(current))")
        restoredAwaitingStart = true
        kill(.dispatcher(0))
        // The operator's restore ends with `sync` (docs/OPERATIONS.md): the copied files are on the disk.
        dispatcher.disk = copy.copy()
        watch(dispatcher.disk, of: 0)
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
        // The schedules are followed again from the start of the history as it is now.
        scheduleModel = ScheduleModel()
        for (app, entry) in reference where entry.states.count > Int(head) + 1 {
            // Built from actions that are gone: rebuilt from the history as it is now.
            guard let hosted = apps[app] else { continue }
            reference[app] = (hosted.makeRuntime(format: .binary) { _, _, _ in }, [])
        }
        staleEpochs.formUnion(epochsServed)
        staleAbove = min(staleAbove, head)
        let newest = max(current, discardedVersions?.upperBound ?? 0)
        discardedVersions = min(head + 1, discardedVersions?.lowerBound ?? .max)...newest
        queue.schedule(.restart(.dispatcher(0)), at: now + rng.micros(20_000...200_000))
    }

    func randomNode() -> Node {
        switch rng.int(0...9) {
        case 0...2: randomDispatcher()
        case 3...7: .store(rng.int(0...(stores.count - 1)))
        default: .view(rng.int(0...(views.count - 1)))
        }
    }

    /// The dispatcher; with HA either one, or the lease service.
    func randomDispatcher() -> Node {
        guard options.ha else { return .dispatcher(0) }
        return rng.chance(0.2) ? .leaseService : .dispatcher(rng.int(0...1))
    }

    func kill(_ node: Node) {
        switch node {
        case .dispatcher(let i):
            dispatchers[i].interpreter = nil
            dispatchers[i].standbyInterpreter = nil
            dispatchers[i].journal = nil
            // Its lanes' syncs in flight are never heard of (the next process syncs the journal as it opens it).
            dispatchers[i].syncLanes = nil
            dispatchers[i].pipelined = nil
            // Pages a failed sync marked clean may still be in the cache for the next process, or not.
            if options.storageFaults && rng.chance(0.5) { dispatchers[i].disk.evictLost() }
            dispatchers[i].lease = nil
            dispatchers[i].steppingDown = false
        case .leaseService:
            leaseService.up = false
            leaseService.incarnation += 1
        case .store(let i): stores[i].interpreter = nil
        case .view(let i): views[i].interpreter = nil
        case .client: break
        }
    }

    func restart(_ node: Node) {
        switch node {
        case .dispatcher(let i):
            guard dispatchers[i].core == nil, dispatchers[i].standby == nil, !dispatchers[i].heldDown else { return }
            if options.ha { startStandby(i) } else { startDispatcher() }
        case .leaseService: if !leaseService.up { restartLeaseService() }
        case .store(let i): if stores[i].core == nil { startStore(i) }
        case .view(let i): if views[i].core == nil { startView(i) }
        case .client: break
        }
    }

    /// Gives a dispatcher's disk the simulation's clock, generator and trace.
    func watch(_ disk: SimDisk, of index: Int) {
        disk.clock = { [unowned self] in now }
        disk.draw = { [unowned self] in Double(rng.next() >> 11) / Double(1 << 53) }
        disk.pick = { [unowned self] in rng.int($0) }
        disk.told = { [unowned self] in note("\(name(of: .dispatcher(index)))'s disk: \($0)") }
        disk.faults = SimDisk.Faults(syncFails: 0.3, misdirects: options.ha ? 0 : 0.01)
    }

    /// A fault of the disk (``SimulationOptions/storageFaults``): for a while it fails syncs (EIO, the
    /// pages lost) and misdirects writes; or it is full; or, while the dispatcher is down, a bit of a
    /// synced record flips, to be found when it starts again. (A pair's members take the first two:
    /// a member that repairs a corrupt journal from its partner is the real-process tests' case.)
    func injectStorageFault() {
        let index = options.ha ? rng.int(0...1) : 0
        let process = dispatchers[index]
        let node = Node.dispatcher(index)
        switch rng.int(0...99) {
        case 0..<50:
            // `none` syncs nothing it promises (docs/GUARANTEES.md): a failing disk is a power cut to it.
            guard fsync != .none else { return }
            let until = now + rng.micros(50_000...500_000)
            note("\(name(of: node))'s disk fails for \((until - now) / 1000) ms")
            process.disk.failingUntil = until
        case 50..<97:
            let until = now + rng.micros(50_000...500_000)
            note("\(name(of: node))'s disk is full for \((until - now) / 1000) ms")
            process.disk.fullUntil = until
        default:
            guard !options.ha else { return }
            // The newest segment: the one an opening reads whole. A record with another after it, so
            // that recovery can tell the damage from a torn tail.
            guard let names = try? process.disk.list(Simulation.journalDirectory),
                let newest = names.filter({ $0.hasSuffix(".journal") }).max(),
                let first = UInt64(newest.dropLast(".journal".count))
            else { return }
            let path = Simulation.journalDirectory + "/" + newest
            let records = process.disk.syncedRecords(path, firstSeq: first)
            guard records.count >= 2 else { return }
            note("crash: \(name(of: node)), and while it is down a bit flips on its disk")
            kill(node)
            let record = records[rng.int(0...(records.count - 2))]
            if let at = process.disk.flipBit(path, in: record, &rng) { note("\(newest): a bit of byte \(at) flips") }
            queue.schedule(.restart(node), at: now + rng.micros(20_000...400_000))
        }
    }
}

@_spi(Simulation) import FluxCore
import Journaling
@_spi(Simulation) import NodeCores

/// High availability (issue 27; docs/OPERATIONS.md, High availability): two dispatchers, each with its journal on its own disk,
/// and a lease service (etcd: one key, leases with a time to live, a revision bumped by every write).
/// A standby campaigns while the key is free; the winner begins the epoch `leading(revision)` in its
/// journal and leads with a `sync` standby, keeping its lease alive every third of its time to live
/// and judging it on its own monotonic clock (which drifts, within ±1 %, and may stall: a clock that
/// lies), as `LeaseClock` does. A leader whose lease runs out, or that a standby tells of a newer
/// epoch, steps down and comes back as a standby. Clients, stores and standbys find the leader by
/// looking the key up.
extension Simulation {
    /// The lease's time to live, simulated µs.
    static let leaseTTL: UInt64 = 600_000

    /// A dispatcher's monotonic clock: it runs at `ppm` millionths of the true rate, and stands still
    /// while stalled.
    struct DriftingClock {
        let ppm: UInt64
        /// Elapsed local time, in µs × 10⁶ (to keep the fractions), as of `readAt`.
        private var value: UInt64 = 0
        private var readAt: UInt64 = 0
        private(set) var stalledUntil: UInt64 = 0

        init(ppm: UInt64) { self.ppm = ppm }

        /// The local time (µs) at true time `now`.
        mutating func read(_ now: UInt64) -> UInt64 {
            let from = max(readAt, min(stalledUntil, now))
            if now > from { value += (now - from) * ppm }
            readAt = max(readAt, now)
            return value / 1_000_000
        }

        mutating func stall(_ now: UInt64, until: UInt64) {
            _ = read(now)
            stalledUntil = max(stalledUntil, until)
        }

        /// The true time at which local time `local` comes, from `now` on (at least 1 µs away).
        mutating func trueTime(of local: UInt64, _ now: UInt64) -> UInt64 {
            let current = read(now)
            let start = max(now, stalledUntil)
            return max(now + 1, start + (local > current ? (local - current) * 1_000_000 / ppm + 1 : 0))
        }
    }

    /// The lease a leader holds, judged as `LeaseClock` judges it (Sources/Leadership): valid until the
    /// send time of the last answered keepalive (or of the grant) plus the time to live, minus a
    /// margin (a tenth of it plus 100 ms) that covers clock-rate drift; renewed every third of it.
    struct HeldLease {
        let id: UInt64
        let revision: Int64
        static let margin = Simulation.leaseTTL / 10 + 100_000
        static let renewalInterval = Simulation.leaseTTL / 3
        static let retryInterval = max(Simulation.leaseTTL / 10, 100_000)
        private(set) var validUntil: UInt64
        private(set) var lastRenewalSent: UInt64
        private(set) var nextRenewal: UInt64

        init(id: UInt64, revision: Int64, grantSentAt: UInt64) {
            self.id = id
            self.revision = revision
            validUntil = grantSentAt + Simulation.leaseTTL - HeldLease.margin
            lastRenewalSent = grantSentAt
            nextRenewal = grantSentAt + HeldLease.renewalInterval
        }

        func isValid(at local: UInt64) -> Bool { local < validUntil }
        var nextWakeUp: UInt64 { min(nextRenewal, validUntil) }

        mutating func renewed(sentAt: UInt64) {
            validUntil = max(validUntil, sentAt + Simulation.leaseTTL - HeldLease.margin)
            lastRenewalSent = max(lastRenewalSent, sentAt)
            nextRenewal = lastRenewalSent + HeldLease.renewalInterval
        }

        mutating func renewalSent(at local: UInt64) { nextRenewal = local + HeldLease.retryInterval }
    }

    /// etcd, as the dispatchers use it: one key, held by a lease; leases expire on the service's own
    /// clock (the true one) a time to live after their grant or last keepalive; every write (a put or
    /// a deletion of the key) bumps the revision. Its state is durable: a restart keeps it, and gives
    /// every lease a full time to live again, as etcd does.
    final class LeaseService {
        var revision: Int64 = 0
        var nextLease: UInt64 = 1
        var leases: [UInt64: (owner: Int, expiresAt: UInt64)] = [:]
        var key: (owner: Int, lease: UInt64)?
        var up = true
        var incarnation: UInt64 = 1
        var frozenUntil: UInt64 = 0
        /// The record of the last leader (`<lease key>/led`, kept without a lease): the head its journal
        /// had when it won, never lower than the one before (``CampaignRule/LastLeader``). Nil: the pair
        /// has not led.
        var led: UInt64?
    }

    enum LeaseRequest {
        /// Grant a lease and put the key with it, unless the key exists.
        case campaign(sentAt: UInt64)
        case keepAlive(lease: UInt64, sentAt: UInt64)
        case revoke(lease: UInt64)
    }

    enum LeaseAnswer {
        case won(lease: UInt64, revision: Int64, sentAt: UInt64)
        case taken(by: Int)
        case renewed(lease: UInt64, sentAt: UInt64)
        /// The lease is gone (expired or revoked).
        case gone(lease: UInt64)
    }

    // MARK: Roles

    func startHA() {
        // The pair is one cluster: both journals are made with its id. (Two journals that each made
        // their own would serve two clusters, and stores refuse the second as foreign.)
        let cluster = HistoryID.newCluster(using: &rng)
        for index in dispatchers.indices {
            do {
                let journal = try openJournal(index, opensEpoch: false)
                try journal.adopt(cluster: cluster, clientScope: journal.clientScope)
            } catch {
                fail("the pair is made", "\(name(of: .dispatcher(index)))'s new journal could not take the pair's cluster id: \(error)")
                return
            }
        }
        if options.fromSingle {
            guard let head = journalFromSingle() else { return }
            if rng.chance(0.5) {
                // The order OPERATIONS asks for is not kept: dispatcher 1 is down when dispatcher 2
                // starts, and once its head start of a lease has passed the empty member leads.
                let at = Simulation.leaseTTL + rng.micros(300_000...1_000_000)
                note("dispatcher 1 (the single dispatcher's journal, head \(head)) is down when dispatcher 2 starts; it starts at \(at / 1000) ms")
                dispatchers[0].journal = nil
                queue.schedule(.restart(.dispatcher(0)), at: at)
                startStandby(1)
                return
            }
        }
        for index in dispatchers.indices { startStandby(index) }
    }

    /// Dispatcher 1's journal becomes the one a single dispatcher kept before the pair
    /// (``SimulationOptions/fromSingle``): an epoch of its own, taken from its clock, not won at the
    /// lease service, and actions of the mix from a client of its own, each acknowledged (a single
    /// dispatcher acknowledges all it journals). Its head, or nil when it could not be written.
    func journalFromSingle() -> UInt64? {
        let node = Node.dispatcher(0)
        do {
            let journal = try openJournal(0, opensEpoch: false)
            let history = try journal.beginEpoch(
                HistoryID.opening(cluster: journal.history.cluster, previousEpoch: journal.history.epoch, wallNanoseconds: time(node).wallNanoseconds)
                    .epoch)
            let client = rng.next() | 1
            let mix = options.apps.mix
            var actions: [Message] = []
            for seq in 1...UInt64(rng.int(5...40)) {
                guard let entry = mix.entry(at: rng.int(0...(mix.totalWeight - 1))) else {
                    preconditionFailure("a draw below the mix's weight is one of its entries")
                }
                let arguments = entry.arguments(&rng)
                let payload = (try? apps[entry.app]?.wirePayload(type: entry.type, argumentsJSON: Array(arguments.utf8), format: .binary)) ?? []
                let header = Header(
                    kind: .action, seq: seq, clientID: client, clientSeq: seq, timestamp: time(node).wallNanoseconds, actionType: entry.type,
                    history: history.rawValue)
                actions.append(Message(topic: entry.app, header: header, payload: payload))
            }
            try journal.append(actions)
            try journal.commit()
            for action in actions { acksSent[action.header.seq] = (client, action.header.seq) }
            (singleHistory, singleHead) = (history.rawValue, UInt64(actions.count))
            note("\(name(of: node))'s journal is a single dispatcher's: seqs 1…\(actions.count) (history \(history)), all acknowledged")
            return UInt64(actions.count)
        } catch {
            fail("the pair is made", "\(name(of: node))'s journal could not be given a single dispatcher's records: \(error)")
            return nil
        }
    }

    /// The leading dispatcher: the one that leads the newest epoch (not stepped down); without HA,
    /// the dispatcher while it runs.
    var leaderProcess: DispatcherProcess? {
        guard options.ha else { return dispatcher.core == nil ? nil : dispatcher }
        return dispatchers.filter { $0.core != nil && $0.core?.steppedDown == nil && !$0.steppingDown }
            .max { ($0.core?.history.epoch ?? 0) < ($1.core?.history.epoch ?? 0) }
    }

    /// The dispatcher comes up (or steps back) as a standby: its journal opened (no new epoch), a
    /// `StandbyCore` from it, connected to the dispatcher the lease service names.
    /// The pair's member token (``DispatcherRules/memberToken``).
    static let memberToken: UInt64 = 0x5EED_0F_7E4B

    func startStandby(_ index: Int) {
        let process = dispatchers[index]
        let node = Node.dispatcher(index)
        process.incarnation += 1
        process.fsyncInFlight = false
        process.turnPending = false
        process.interpreter = nil
        process.syncLanes = nil
        process.pipelined = nil
        process.lease = nil
        process.steppingDown = false
        process.retryAt = 0
        process.standbyDiskFull = false
        process.emptyAskingSince = nil
        let journal: Journal
        do {
            journal = try openJournal(index, opensEpoch: false)
        } catch {
            startAgainLater(index, "it cannot open its journal: \(error)")
            return
        }
        // The members prove themselves with a member token, as over ipc.
        var standbyRules = StandbyCore.Rules()
        standbyRules.memberToken = Self.memberToken
        let lastStamp: UInt64
        do {
            lastStamp = try journal.history(at: journal.lastSeq) ?? 0
        } catch {
            startAgainLater(index, "its journal cannot be read: \(error)")
            return
        }
        let standby = StandbyCore(
            rules: standbyRules, lastSeq: journal.lastSeq, lastStamp: lastStamp,
            newestEpoch: journal.history.epoch, now: time(node), logger: logger)
        if let canary = options.canary { standby.brokenRules = [canary] }
        standby.onBrokenInvariant = { [unowned self] in fail("core invariant", "\(name(of: node))'s standby core: \($0)") }
        let host = StandbyHost(simulation: self, index: index)
        process.standbyHost = host
        process.standbyInterpreter = StandbyInterpreter(core: standby, io: host, logger: logger)
        connect(index)
        note(
            "\(name(of: node)) starts as a standby: journal head \(journal.lastSeq) (history \(journal.history)), following \(name(of: .dispatcher(process.following)))"
        )
        carryOutStandby(index)
        scheduleTimer(node, deadlineMilliseconds: 0)
        queue.schedule(.leaseTimer(index, incarnation: process.incarnation), at: now + rng.micros(1_000...50_000))
    }

    /// A new replication connection, to the dispatcher that leads as far as the lease service says
    /// (the other one when it names none, or this one).
    func connect(_ index: Int) {
        let process = dispatchers[index]
        process.connection += 1
        let named = lookUpLeader(for: .dispatcher(index))
        process.following = named.flatMap { $0 == index ? nil : $0 } ?? (1 - index)
    }

    /// Carries out the standby core's commands with the real interpreter (`PairLoop` runs it too).
    func carryOutStandby(_ index: Int) {
        let process = dispatchers[index]
        guard let interpreter = process.standbyInterpreter else { return }
        do {
            try interpreter.carryOut()
        } catch let refusal as StandbyCore.RefusedToDrop {
            refusedToDrop(index, refusal)
        } catch let error as JournalError {
            startAgainLater(index, "its journal failed: \(error.message)")
        } catch {
            fail("standby", "\(name(of: .dispatcher(index))) could not carry out its core's commands: \(error)")
        }
    }

    /// The leader's core said it steps down: it revokes its lease, and after a restart-like
    /// transition it is a standby. (Until then its core is still there: a canary may make it act.)
    func steppedDown(_ index: Int, reason: String) {
        let process = dispatchers[index]
        note("\(name(of: .dispatcher(index))) steps down: \(reason)")
        if let lease = process.lease { requestLease(index, .revoke(lease: lease.id)) }
        process.lease = nil
        process.steppingDown = true
        queue.schedule(.becomeStandby(index, incarnation: process.incarnation), at: now + rng.micros(5_000...50_000))
    }

    /// The standby won the key: its journal, opened again (synced), begins the epoch the revision
    /// names; it leads from it with a `sync` standby.
    func becomeLeader(_ index: Int, lease: UInt64, revision: Int64, sentAt: UInt64) {
        let process = dispatchers[index]
        let node = Node.dispatcher(index)
        process.incarnation += 1
        process.fsyncInFlight = false
        process.turnPending = false
        process.standbyInterpreter = nil
        process.retryAt = 0
        let journal: Journal
        do {
            journal = try openJournal(index, opensEpoch: false)
        } catch {
            requestLease(index, .revoke(lease: lease))
            startAgainLater(index, "it cannot open its journal: \(error)")
            return
        }
        let records = records(of: journal)
        let leading = HistoryID.leading(cluster: journal.history.cluster, revision: revision)
        guard leading.epoch > journal.history.epoch else {
            note("\(name(of: node)) won at revision \(revision), but its journal has seen a newer epoch: it gives the lease up")
            requestLease(index, .revoke(lease: lease))
            startStandby(index)
            return
        }
        do {
            _ = try journal.beginEpoch(leading.epoch)
        } catch {
            requestLease(index, .revoke(lease: lease))
            startAgainLater(index, "its journal could not record the epoch: \(error)")
            return
        }
        record(
            22, node.code, UInt64(revision),
            "\(name(of: node)) wins the lease at revision \(revision) (epoch \(leading)): journal head \(journal.lastSeq)")
        // The one leader that may begin without acknowledged actions: the empty member of a pair started
        // from a single dispatcher's journal, leading first (OPERATIONS names it). The other member
        // refuses to drop them, and without it this leader acknowledges nothing.
        let lacksSingle = singleHistory != nil && records.first?.header.history != singleHistory
        checkJournal(records, when: "\(name(of: node)) won the lease", excusing: lacksSingle ? singleSeqs : [])
        // Where leading began, in the record of the last leader (as `PairLoop` writes it before it
        // serves; under sync never lower than the one before).
        leaseService.led = max(leaseService.led ?? 0, journal.lastSeq)
        var rules = dispatcherRules()
        rules.replication = .sync
        rules.memberToken = Self.memberToken
        let core: DispatcherCore
        do {
            core = try DispatcherBoot.core(
                rules: rules, log: journal, now: time(node), logger: logger,
                crossCheck: options.canary == .scheduleFiresTwice ? nil : { [unowned self] in fail("checkpoint", "\(name(of: node)): \($0)") })
            try forgetFiresIfCanary(core, log: journal)
            core.quarantined(try journal.quarantine())
        } catch {
            fail("the dispatcher starts", "its journal could not be read: \(error)")
            return
        }
        guard lead(index, core: core) else {
            requestLease(index, .revoke(lease: lease))
            return
        }
        process.lease = HeldLease(id: lease, revision: revision, grantSentAt: sentAt)
        epochsServed.insert(leading.epoch)
        var held: [UInt64: [UInt64]] = [:]
        for record in records { held[record.header.seq] = [record.header.clientID, record.header.clientSeq] }
        epochStarts.append((leading.epoch, index, held))
        scheduleTimer(node, deadlineMilliseconds: 0)
        queue.schedule(.leaseTimer(index, incarnation: process.incarnation), at: now)
    }

    /// A second after its journal had no room, the standby follows again from what the journal holds.
    func standbyFollowsAgain(_ index: Int, incarnation: UInt64) {
        let process = dispatchers[index]
        guard process.incarnation == incarnation, process.standbyDiskFull, let standby = process.standby, let journal = process.journal else {
            return
        }
        process.standbyDiskFull = false
        do {
            standby.truncated(lastSeq: journal.lastSeq, lastStamp: try journal.history(at: journal.lastSeq) ?? 0, now: time(.dispatcher(index)))
        } catch {
            startAgainLater(index, "its journal cannot be read: \(error)")
            return
        }
        carryOutStandby(index)
    }

    // MARK: The lease, as a dispatcher sees it

    func requestLease(_ index: Int, _ request: LeaseRequest) {
        send(.leaseRequest(from: index, incarnation: dispatchers[index].incarnation, request), from: .dispatcher(index), to: .leaseService)
    }

    /// Before a leader acts on anything: is its lease still valid by its own clock? If not, it leads no more.
    func leaseCheck(_ index: Int) {
        let process = dispatchers[index]
        guard options.ha, let core = process.core, core.steppedDown == nil, let lease = process.lease else { return }
        let local = process.clock.read(now)
        guard !lease.isValid(at: local) else { return }
        record(23, Node.dispatcher(index).code, 0, "\(name(of: .dispatcher(index)))'s lease ran out on its clock")
        core.leaseExpired()
        carryOutDispatcher(index)
    }

    /// The lease clock's wake-up: a leader's keepalive (or its lease running out); a standby's campaign.
    func leaseTimer(_ index: Int, incarnation: UInt64) {
        let process = dispatchers[index]
        guard process.incarnation == incarnation, process.core != nil || process.standby != nil else { return }
        if process.frozenUntil > now {
            queue.schedule(.leaseTimer(index, incarnation: incarnation), at: process.frozenUntil)
            return
        }
        let local = process.clock.read(now)
        if process.core != nil {
            leaseCheck(index)
            guard var lease = process.lease else { return }  // stepped down
            if local >= lease.nextRenewal {
                requestLease(index, .keepAlive(lease: lease.id, sentAt: local))
                lease.renewalSent(at: local)
                process.lease = lease
            }
            queue.schedule(.leaseTimer(index, incarnation: incarnation), at: process.clock.trueTime(of: lease.nextWakeUp, now))
        } else {
            if mayCampaign(index) { requestLease(index, .campaign(sentAt: local)) }
            queue.schedule(.leaseTimer(index, incarnation: incarnation), at: now + HeldLease.renewalInterval + rng.micros(0...20_000))
        }
    }

    /// The campaign rule (``CampaignRule``) as `PairLoop`'s election asks it before each campaign:
    /// the lease service's record of the last leader read only when the rule needs it.
    func mayCampaign(_ index: Int) -> Bool {
        let process = dispatchers[index]
        guard let standby = process.standby, let journal = process.journal else { return false }
        var member = standby.campaigner(repairPending: false, head: journal.lastSeq)
        let leaseMilliseconds = Simulation.leaseTTL / 1000
        let verdict = CampaignRule.verdict(member, lastLeader: nil, leaseMilliseconds: leaseMilliseconds)
        guard verdict == .askLastLeader else { return verdict == .campaign }
        let service = leaseService
        let reachable = service.up && service.frozenUntil <= now && !downLinks.contains(Simulation.link(.dispatcher(index), .leaseService))
        let lastLeader: CampaignRule.LastLeader? = reachable ? service.led.map { .head($0) } ?? CampaignRule.LastLeader.neverLed : nil
        if lastLeader == CampaignRule.LastLeader.neverLed && member.head == 0 {
            let since = process.emptyAskingSince ?? now
            process.emptyAskingSince = since
            member.emptyAskingMilliseconds = (now - since) / 1000
        }
        return CampaignRule.verdict(member, lastLeader: lastLeader, read: true, leaseMilliseconds: leaseMilliseconds) == .campaign
    }

    /// A member refused to drop records its leader lacks (``StandbyCore/refusalToDrop(after:stampAfter:)``)
    /// and stopped, as `PairLoop` does, saying why. The operator then does what OPERATIONS says: stops
    /// the leader, starts this member and lets it lead, and starts the other again once it does. Only
    /// a pair started from a single dispatcher's journal meets this here: otherwise, under sync, every
    /// leader holds every acknowledged action, and the campaign rule keeps a member that lacks them
    /// from leading.
    func refusedToDrop(_ index: Int, _ refusal: StandbyCore.RefusedToDrop) {
        let node = Node.dispatcher(index), other = 1 - index
        guard options.fromSingle else {
            fail("standby", "\(name(of: node)) had to refuse to drop records: its leader lacked acknowledged actions: \(refusal)")
            return
        }
        result.refusalsToDrop += 1
        record(26, node.code, 0, "\(name(of: node)) refuses to drop records its leader lacks, and stops: \(refusal)")
        // What this member's journal holds (nothing when it has none open).
        let head = dispatchers[index].journal.map(\.lastSeq) ?? UInt64.zero
        kill(node)
        if let led = leaseService.led, led > head {
            // The empty member led more than once, and its record moved past this journal's head with
            // records of its own that nobody acknowledged (it had no standby): this member would not lead,
            // and says to delete the record, which the operator does.
            note("the last leader's record (\(led)) is past \(name(of: node))'s head (\(head)): the operator deletes it")
            leaseService.led = nil
        }
        let otherName = name(of: .dispatcher(other))
        note("the operator stops \(otherName), starts \(name(of: node)) to lead, then starts \(otherName) again")
        // A clean stop gives the lease up at once.
        if let lease = dispatchers[other].lease { requestLease(other, .revoke(lease: lease.id)) }
        kill(.dispatcher(other))
        dispatchers[other].heldDown = true
        queue.schedule(.restart(node), at: now + rng.micros(100_000...1_000_000))
        queue.schedule(.operatorStarts(other), at: now + 100_000)
    }

    /// The operator starts a member it stopped (``refusedToDrop(_:_:)``) once the other one leads.
    func operatorStarts(_ index: Int) {
        let process = dispatchers[index]
        guard process.heldDown else { return }
        guard let leader = leaderProcess, leader.index != index, leader.lease != nil else {
            queue.schedule(.operatorStarts(index), at: now + 100_000)
            return
        }
        process.heldDown = false
        note("the operator starts \(name(of: .dispatcher(index))) again: \(name(of: .dispatcher(leader.index))) leads")
        restart(.dispatcher(index))
    }

    func leaseAnswered(_ index: Int, _ answer: LeaseAnswer) {
        let process = dispatchers[index]
        switch answer {
        case .won(let lease, let revision, let sentAt):
            guard process.standby != nil, process.core == nil else { return }  // a late or repeated answer
            becomeLeader(index, lease: lease, revision: revision, sentAt: sentAt)
        case .taken(let owner):
            leaderKnown[.dispatcher(index)] = owner
        case .renewed(let lease, let sentAt):
            guard process.lease?.id == lease else { return }
            process.lease?.renewed(sentAt: sentAt)
        case .gone(let lease):
            guard process.lease?.id == lease, let core = process.core, core.steppedDown == nil else { return }
            note("\(name(of: .dispatcher(index))) hears its lease is gone")
            core.leaseExpired()
            carryOutDispatcher(index)
        }
    }

    /// Who leads, as `node` finds it at the lease service now (when it can reach it), else as it last did.
    func lookUpLeader(for node: Node) -> Int? {
        if leaseService.up, leaseService.frozenUntil <= now, !downLinks.contains(Simulation.link(node, .leaseService)) {
            leaderKnown[node] = leaseService.key?.owner
        }
        return leaderKnown[node]
    }

    /// The dispatcher a store or client sends to: the only one, or the one the lease service names.
    func dispatcherTarget(for node: Node, current: Int) -> Int {
        guard options.ha else { return 0 }
        return lookUpLeader(for: node) ?? (1 - current)
    }

    // MARK: Faults

    /// Faults aimed at leadership: the leader frozen past its lease, cut off from its standby or the
    /// lease service, its clock stalled (a lease clock that lies: fencing must hold), a dispatcher crashed.
    func injectHAFault() {
        let target = leaderProcess?.index ?? rng.int(0...1)
        let node = Node.dispatcher(target)
        switch rng.int(0...99) {
        case 0..<30:
            let until = now + rng.micros(300_000...2_500_000)
            note("freeze \(name(of: node)) for \((until - now) / 1000) ms")
            dispatchers[target].frozenUntil = max(dispatchers[target].frozenUntil, until)
        case 30..<55:
            let other: Node = rng.chance(0.5) ? .dispatcher(1 - target) : .leaseService
            note("partition: \(name(of: node)) | \(name(of: other))")
            downLinks.insert(Simulation.link(node, other))
            queue.schedule(.linkUp(node, other), at: now + rng.micros(200_000...1_500_000))
        case 55..<85:
            let until = now + rng.micros(700_000...2_500_000)
            note("\(name(of: node))'s monotonic clock stalls for \((until - now) / 1000) ms")
            dispatchers[target].clock.stall(now, until: until)
            if rng.chance(0.5) {
                // Split brain: the lease runs out at the service while the stalled leader goes on; its
                // rival wins, then crashes and comes back as a standby that must not follow the old leader.
                queue.schedule(.crash(.dispatcher(1 - target)), at: now + rng.micros(800_000...1_600_000))
            }
        default:
            let index = rng.int(0...1)
            let victim = Node.dispatcher(index)
            if fsync != .none && rng.chance(0.5) {
                // Its machine alone loses power: its journal keeps what was synced.
                let what = dispatchers[index].disk.powerCut(&rng)
                note("power cut of \(name(of: victim))'s machine: \(what)")
            } else {
                note("crash: \(name(of: victim))")
            }
            kill(victim)
            queue.schedule(.restart(victim), at: now + rng.micros(20_000...400_000))
        }
    }

    // MARK: Invariants

    /// An ACK is going out from dispatcher `index`: one dispatcher ACKs in an epoch; the action is on
    /// the disk of both journals (under `none`, written to both); and every epoch begun since the
    /// ACK's own began with it in its leader's journal.
    func checkAcks(_ message: Message, from index: Int) {
        guard message.kind == .ack || message.kind == .ackBatch, let replies = try? AckBatch.unpack(message) else { return }
        for reply in replies where reply.kind == .ack {
            result.invariantChecks += 1
            let seq = reply.header.seq, client = reply.header.clientID, clientSeq = reply.header.clientSeq
            let history = HistoryID(rawValue: reply.header.history)
            if let other = ackedBy[history.epoch], other != index {
                fail(
                    "one leader per epoch",
                    "\(name(of: .dispatcher(index))) and \(name(of: .dispatcher(other))) both acknowledged in epoch \(history)")
                return
            }
            ackedBy[history.epoch] = index
            for process in dispatchers {
                let held = process.disk.records(in: Simulation.journalDirectory, durable: fsync != .none)
                let record = held.first { $0.header.seq == seq }
                guard record?.header.clientID != client || record?.header.clientSeq != clientSeq else { continue }
                let what =
                    record.map { "its seq \(seq) is client \($0.header.clientID) seq \($0.header.clientSeq)" }
                    ?? "it holds seqs through \(held.last?.header.seq ?? 0)"
                fail(
                    "ACK means durable in both journals",
                    "\(name(of: .dispatcher(index))) acknowledged seq \(seq) (epoch \(history)) while \(name(of: .dispatcher(process.index)))'s journal "
                        + "does not hold it \(fsync == .none ? "written" : "on its disk") (fsync \(fsync.rawValue)): \(what)"
                )
                return
            }
            for start in epochStarts where start.epoch > history.epoch && start.held[seq] != [client, clientSeq] {
                fail(
                    "ACKs survive failover",
                    "\(name(of: .dispatcher(index))) acknowledged seq \(seq) in epoch \(history) after \(name(of: .dispatcher(start.dispatcher))) "
                        + "began the newer epoch \(start.epoch) without it")
                return
            }
            acksSent[seq] = (client, clientSeq)
        }
    }
}

import FluxCore
import Foundation
import Logging
import NodeCores
import NodeSupport
import Synchronization
import ZeroMQ

/// A dispatcher of a pair (`[ha]`): a standby that follows the leader's journal until it wins the
/// lease in etcd, then the leader, in a new epoch named by the revision it won at.
///
/// As a standby it binds nothing that clients, stores or views use: they connect to every dispatcher
/// and send only on connections that are up (`ZMQ_IMMEDIATE`), so they reach the leader alone. It
/// follows over a DEALER connected to every other dispatcher's replication endpoint, which only the
/// leader binds. When it leads and loses the lease (or etcd, asked about a peer's claim of a newer
/// epoch, names another leader), it stops and
/// its process exits with status 75 (`Supervisor.steppedDownStatus`): its supervisor starts it again
/// at once, as a standby.
final class PairLoop: NodeLoop {
    let configuration: DispatcherNode.Configuration
    let ha: DispatcherNode.HighAvailability
    let context: Context
    let logger: Logger
    let control: NodeControl<DispatcherEvent>
    let journal: Journal
    let client: any LeaseService
    let election: any LeaseElection
    /// Whether this member may campaign: off while it lacks actions a leader told it were committed.
    let gate = CampaignGate()
    /// The newest seq any leader has said it committed, as this standby heard it.
    private var committedHeard: UInt64 = 0
    /// Set when the standby's journal had no room for an append: until then nothing is written (the
    /// journal is behind what the core believes), and then the core starts again from the journal's end.
    private var diskFullUntil: UInt64?
    /// Peers' claims of a newer epoch, checked against etcd one at a time.
    let claims = LeadershipClaims()
    /// While it stands by: its DEALER to every other member's replication endpoint.
    private var dealer: Socket?

    init(configuration: DispatcherNode.Configuration, context: Context, logger: Logger, control: NodeControl<DispatcherEvent>) throws {
        guard let ha = configuration.ha else { throw NodeError("a dispatcher of a pair needs its [ha] settings") }
        guard let journal = configuration.journal else { throw NodeError("a dispatcher of a pair keeps a journal: set [journal] dir") }
        self.configuration = configuration
        self.ha = ha
        self.context = context
        self.logger = logger
        self.control = control
        // Its epochs come from the lease alone: opening the journal begins none.
        let (opened, repaired) = try PairLoop.openRepairing(journal, mode: ha.mode, logger: logger)
        self.journal = opened
        gate.repairPending.store(repaired, ordering: .releasing)
        // Both members of a new pair must serve one cluster id, whichever of them leads first: an empty
        // journal takes the one the lease key names. (A journal with records keeps its own; a standby
        // adopts its leader's when it is welcomed.)
        if self.journal.lastSeq == 0 {
            try self.journal.adopt(cluster: PairLoop.clusterID(forKey: ha.key), clientScope: self.journal.clientScope)
        }
        client = try ha.leases(ha.etcd, logger)
        let leader = LeaderRecord(
            name: ha.name, intake: configuration.intake, actions: configuration.actions, replay: configuration.replay, replication: ha.replication)
        let handover = Handover(client: client, key: ha.key, name: ha.name)
        let led = LedGate(client: client, key: ha.key, leaseMs: ha.leaseMilliseconds, logger: logger)
        gate.head.store(self.journal.lastSeq, ordering: .releasing)
        election = client.election(
            key: ha.key, value: leader.encoded(), leaseMilliseconds: ha.leaseMilliseconds, logger: logger,
            mayCampaign: { [gate, mode = ha.mode, leaseMs = UInt64(max(ha.leaseMilliseconds, 0))] in
                // The rule is the simulator's too (``CampaignRule``); etcd is read only when it must be.
                // (Both members repaired: neither leads; the log says why.)
                let member = gate.member(replication: mode)
                switch CampaignRule.verdict(member, lastLeader: nil, leaseMilliseconds: leaseMs) {
                case .campaign: break
                case .askLastLeader: guard await led.allows(member) else { return false }
                default: return false
                }
                return await handover.allows()
            }
        ) { [control] event in
            switch event {
            case .elected(let revision): control.post(.elected(revision: revision))
            case .lost(let reason): control.post(.leaseLost(reason))
            }
        }
    }

    /// Opens the member's journal. Under `sync` a corrupt record (one that fails its check with intact
    /// records after it) is repaired from the other member: everything from it on is set aside (never
    /// deleted), and the member follows the leader, which sends those records again. That loses nothing,
    /// because under `sync` every acknowledged action is durable on both members, and a repaired member
    /// does not campaign (``CampaignGate/repairPending``) until it has followed a leader and caught up:
    /// etcd's record of what was committed (``LedGate``) may lag the last ACKs by seconds, so it alone
    /// would let a repaired member lead without records the other holds. Under `async` the other member may lack those records, so the open fails, as a
    /// single dispatcher's does, and the operator decides.
    static func openRepairing(
        _ journal: DispatcherNode.JournalConfiguration, mode: DispatcherRules.Replication, logger: Logger
    ) throws
        -> (journal: Journal, repaired: Bool)
    {
        func open() throws -> Journal {
            try Journal(directory: journal.directory, policy: journal.policy, segmentBytes: journal.segmentBytes, opensEpoch: false)
        }
        do {
            return (try open(), false)
        } catch let error as JournalError where mode == .sync && error.corruptFromSeq != nil {
            let from = error.corruptFromSeq ?? 0
            let cut = try Journal.truncate(directory: journal.directory, fromSeq: from)
            logger.error(
                "the journal has a corrupt record; set aside from it, to be fetched again from the other member (this dispatcher will not lead until it has followed a leader and caught up)",
                metadata: [
                    "seq": "\(from)", "set_aside": "\(cut.setAside.joined(separator: ", "))", "bytes": "\(cut.bytesSetAside)",
                    "reason": "\(error.message)",
                ])
            let repaired = try open()
            precondition(repaired.lastSeq == from - 1, "the journal ends just before the seq it was cut from")
            return (repaired, true)
        }
    }

    func run() throws {
        logger.info(
            "dispatcher pair member starting as a standby",
            metadata: ["name": "\(ha.name)", "journal": "\(journal.directory)", "head": "\(journal.lastSeq)", "etcd": "\(ha.etcd)"])
        election.start()
        defer { endElection() }
        // Its own ports, held while it follows so that no other process takes them; let go just before
        // it binds them as the leader.
        let ports = PortReservations(
            endpoints: [configuration.intake, configuration.actions, configuration.replay, ha.replication], logger: logger)
        defer { ports.release() }
        guard let (revision, seen) = try follow(holding: ports) else { return }
        // The revision names the epoch; an etcd whose data was lost starts its revisions again, so the
        // epoch is also past every one this journal has recorded or this standby has seen.
        let won = HistoryID.leading(cluster: journal.history.cluster, revision: revision).epoch
        let history = try journal.beginEpoch(max(won, journal.history.epoch + 1, seen + 1))
        logger.info("won the lease: leading", metadata: ["revision": "\(revision)", "history": "\(history)", "head": "\(journal.lastSeq)"])
        let record = try recordLed(LedRecord(name: ha.name, head: journal.lastSeq, history: history.rawValue))
        ports.release()
        let leader = try DispatcherLoop(configuration: configuration, context: context, logger: logger, control: control, journal: journal)
        leader.onLeadershipClaim = { [claims, election, control, logger] claim in
            claims.verify(claim, election: election, control: control, logger: logger)
        }
        // Under sync, the record follows what is committed (a member with less lacks acknowledged
        // actions); under async a standby may lag by design, and the record stays where leading began.
        if ha.mode == .sync {
            let refresher = LedRefresher(election: election, key: LedGate.key(for: ha.key), record: record, logger: logger)
            leader.onCommitted = { refresher.committed($0) }
            defer { refresher.stop() }
            try leader.run()
        } else {
            try leader.run()
        }
    }

    /// Gives the lease up (a clean stop hands over at once) and closes the etcd client, waiting at most
    /// a few seconds: this is the node's own thread, not the cooperative pool.
    private func endElection() {
        let election = election, client = client
        _ = PairLoop.wait(seconds: 5) {
            await election.stop()
            try? await client.shutdown()
        }
    }

    /// Runs `work` on the cooperative pool and waits for it on this (the node's) thread, at most
    /// `seconds`: its outcome, or nil if it had not ended by then.
    private static func wait<T: Sendable>(seconds: Int, _ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error>? {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        _ = done.wait(timeout: .now() + .seconds(seconds))
        return outcome.withLock { $0 }
    }

    /// Writes where this leader began into etcd before it serves anything: a member whose journal ends
    /// before that does not campaign (``LedGate``). Under sync the record never goes down: a leader
    /// with less than the last one recorded keeps the higher head. Not written (etcd silent, the lease
    /// gone), this member steps down and starts again as a standby.
    private func recordLed(_ mine: LedRecord) throws -> LedRecord {
        let election = election, client = client, key = LedGate.key(for: ha.key), sync = ha.mode == .sync
        let written = PairLoop.wait(seconds: 10) { () async throws -> LedRecord in
            var record = mine
            if sync, let held = try await client.value(at: key), let previous = LedRecord.decode(held) {
                record.head = max(record.head, previous.head)
            }
            guard try await election.putWhileLeading(key, value: record.encoded()) else {
                throw SteppedDown(reason: "the lease was lost before leading was recorded")
            }
            return record
        }
        switch written {
        case .success(let record): return record
        case .failure(let error as SteppedDown): throw error
        case .failure(let error): throw SteppedDown(reason: "could not record leading in etcd (\(key)): \(error)")
        case nil: throw SteppedDown(reason: "etcd did not answer the record of leading (\(key)) within 10 s")
        }
    }

    /// A cluster id (24 bits, never 0) from the lease key: FNV-1a of its bytes.
    static func clusterID(forKey key: String) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in key.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return max(hash & 0xFF_FFFF, 1)
    }

    // MARK: Standby

    /// Follows the leader until this process wins the lease (its revision, and the newest epoch the
    /// standby has seen) or is stopped (nil).
    private func follow(holding ports: PortReservations) throws -> (revision: Int64, newestEpoch: UInt64)? {
        let lastStamp = try journal.history(at: journal.lastSeq) ?? 0
        let core = StandbyCore(
            rules: standbyRules, lastSeq: journal.lastSeq, lastStamp: lastStamp, newestEpoch: journal.history.epoch,
            committedHeard: committedHeard, now: .now(), logger: logger)
        let interpreter = StandbyInterpreter(
            core: core, io: self, logger: logger, checkpoints: journal, retainBytes: configuration.rules.retainBytes)
        dealer = try connectToPeers()
        defer {
            dealer?.close()
            dealer = nil
        }
        while !control.stopRequested {
            core.tick(now: .now())
            ports.retry()
            try interpreter.carryOut()
            // Read after the commands: `.reconnect` replaces it.
            guard let dealer = self.dealer else { break }
            committedHeard = core.committedHeard
            gate.head.store(journal.lastSeq, ordering: .releasing)
            // In sync with its leader: it holds what that leader committed and the head it began at (a
            // fresh leader has committed nothing yet, though earlier epochs acknowledged up to there).
            // Otherwise etcd's record decides (``LedGate``), and says why in the log.
            let synced = core.isInSync
            gate.synced.store(synced, ordering: .releasing)
            if synced && gate.repairPending.load(ordering: .acquiring) {
                gate.repairPending.store(false, ordering: .releasing)
                logger.notice("the journal's set-aside part is held again, from the leader: this dispatcher may lead again")
            }
            gate.caughtUp.store(core.holdsWhatWasCommitted, ordering: .releasing)
            var poller = Poller()
            let dealerIndex = poller.add(.socket(dealer))
            let wakeIndex = poller.add(.fileDescriptor(control.wake.descriptor))
            let wait = MonotonicClock.elapsed(since: MonotonicClock.nowMilliseconds(), now: core.nextDeadlineMs(now: .now()))
            _ = try poller.poll(timeoutMilliseconds: Int(min(wait, 1000)))
            if poller.isReadable(wakeIndex) {
                // In order: a lease lost after it was won (both in one batch) is not led with.
                var won: Int64?
                for event in control.takeAll() {
                    switch event {
                    case .elected(let revision): won = revision
                    case .leaseLost: won = nil
                    }
                }
                if let won { return (won, core.newestEpoch) }
            }
            if let until = diskFullUntil {
                // What arrives while the journal could not be written is dropped: the core believes it holds
                // records the journal lacks, until it starts again from the journal's end.
                while (try? dealer.receive(dontWait: true)) != nil {}
                guard MonotonicClock.nowMilliseconds() >= until else { continue }
                diskFullUntil = nil
                core.truncated(lastSeq: journal.lastSeq, lastStamp: try journal.history(at: journal.lastSeq) ?? 0, now: .now())
                continue
            }
            if poller.isReadable(dealerIndex) {
                for _ in 0..<1024 {
                    guard let frames = try dealer.receive(dontWait: true), let message = try? Message(frames: frames) else { break }
                    core.received(message, now: .now())
                }
            }
        }
        return nil
    }

    private var standbyRules: StandbyCore.Rules {
        var rules = StandbyCore.Rules()
        rules.leaderTimeoutMilliseconds = UInt64(max(1000, configuration.heartbeatMilliseconds * 5))
        rules.memberToken = ha.memberToken
        rules.replication = ha.mode
        return rules
    }

    /// A DEALER to every other dispatcher's replication endpoint: only the leader's is bound.
    private func connectToPeers() throws -> Socket {
        let dealer = try SocketDefaults.dealer(context)
        // With this member's own key: the leader's replication endpoint admits no other.
        var security = configuration.security
        if let key = ha.memberKey { security?.client = key }
        try dealer.connectSecurely(ha.peers.joined(separator: ","), security)
        return dealer
    }
}

/// The standby's DEALER and journal, as its interpreter reaches them.
extension PairLoop: StandbyIO {
    func time() -> NodeTime { .now() }
    func sendToLeader(_ message: Message) { _ = try? dealer?.send(message.frames, dontWait: true) }

    func append(_ records: StampedRecords) throws -> StandbyAppend {
        guard diskFullUntil == nil else { return .skipped }
        do {
            try journal.append([records])
            return .written
        } catch let error as JournalError where error.isOutOfSpace {
            // Undone whole. No ACK: under sync the leader acknowledges nothing new meanwhile. Once a
            // second has passed the standby says hello from what its journal holds, and the leader
            // feeds it again (a full disk stalls the pair; it does not crash-loop the standby).
            logger.error("the journal cannot be written; following again in a second", metadata: ["problem": "\(error.message)"])
            diskFullUntil = MonotonicClock.nowMilliseconds() + 1000
            return .noRoom
        }
    }

    func sync(through seq: UInt64) throws -> Bool {
        try journal.commit()
        return true
    }

    func firstSeqOfRun(endingAt seq: UInt64) throws -> UInt64 { try journal.firstSeqOfRun(endingAt: seq) }
    func stamp(at seq: UInt64) throws -> UInt64? { try journal.history(at: seq) }

    func truncate(after seq: UInt64) throws -> (lastSeq: UInt64, lastStamp: UInt64) {
        try journal.truncate(after: seq)
        return (journal.lastSeq, try journal.history(at: journal.lastSeq) ?? 0)
    }

    func adopt(cluster: UInt32, clientScope: ClientScope) throws { try journal.adopt(cluster: cluster, clientScope: clientScope) }

    func reconnect() throws {
        dealer?.close()
        dealer = try connectToPeers()
    }

    func keepQuarantine(_ entries: [Quarantine]) throws { try journal.keepQuarantine(entries) }
    func storeNeeds() -> [JournalRetention.Need]? { configuration.storeNeeds() }
}

/// The lease key's value: who leads and where it listens.
public struct LeaderRecord: Codable, Equatable, Sendable {
    public var name: String
    public var intake: String
    public var actions: String
    public var replay: String
    public var replication: String

    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array((try? encoder.encode(self)) ?? Data())
    }

    public static func decode(_ bytes: [UInt8]) -> LeaderRecord? { try? JSONDecoder().decode(LeaderRecord.self, from: Data(bytes)) }
}

/// A planned handover (`zflux failover`): while `<key>/handover` names another dispatcher, this one
/// does not campaign, so the leader that steps down (and is started again at once) cannot win the
/// lease back before the standby does. The key lives on a short lease of its own.
public struct Handover: Sendable {
    package let client: any LeaseService
    public let key: String
    public let name: String

    package init(client: any LeaseService, key: String, name: String) {
        self.client = client
        self.key = key
        self.name = name
    }

    public static func key(for leaderKey: String) -> String { leaderKey + "/handover" }

    /// Whether this dispatcher may campaign now (yes when etcd cannot say: the lease decides then).
    public func allows() async -> Bool {
        guard let held = try? await client.value(at: Handover.key(for: key)) else { return true }
        return String(decoding: held, as: UTF8.self) == name
    }
}

/// What the campaign rule (``CampaignRule``) needs of this member, set on the node thread and read by
/// the election.
final class CampaignGate: Sendable {
    /// It holds what the leaders it followed said they had committed (``StandbyCore/holdsWhatWasCommitted``).
    let caughtUp = Atomic<Bool>(true)
    /// The last seq of its journal.
    let head = Atomic<UInt64>(0)
    /// Whether, in this run, it followed a leader and held all that leader said was committed.
    let synced = Atomic<Bool>(false)
    /// Set when opening its journal set a corrupt part aside (``PairLoop/openRepairing(_:mode:logger:)``):
    /// it lacks records the other member holds, and etcd's record of what was committed may lag the
    /// last ACKs by seconds, so it must not lead before it has followed a leader and caught up. Cleared
    /// once it has.
    let repairPending = Atomic<Bool>(false)

    func member(replication: DispatcherRules.Replication) -> CampaignRule.Member {
        CampaignRule.Member(
            holdsCommitted: caughtUp.load(ordering: .acquiring), inSync: synced.load(ordering: .acquiring),
            repairPending: repairPending.load(ordering: .acquiring), head: head.load(ordering: .acquiring), replication: replication)
    }
}

/// Where the newest leader began (its journal's head when it won) and, under sync, how far it has
/// committed since, within a few seconds (`<leader key>/led` in etcd, kept without a lease).
struct LedRecord: Codable, Equatable, Sendable {
    var name: String
    var head: UInt64
    var history: UInt64

    func encoded() -> [UInt8] { Array((try? JSONEncoder().encode(self)) ?? Data()) }
    static func decode(_ bytes: [UInt8]) -> LedRecord? { try? JSONDecoder().decode(LedRecord.self, from: Data(bytes)) }
}

/// Moves the leader's record in etcd (``LedRecord``) up to what it has committed: at once the first
/// time it passes where leading began, then every few seconds while it moves (a last commit before a
/// quiet spell included). One write at a time, off the node thread, and only while it holds the lease.
final class LedRefresher: Sendable {
    static let interval: Duration = .seconds(5)
    let election: any LeaseElection
    let key: String
    let logger: Logger
    private struct State {
        var written: LedRecord
        var pending: UInt64
        var firstDone = false
        var everWritten = false
        var writing = false
        var timer: Task<Void, Never>?
    }
    private let state: Mutex<State>

    init(election: any LeaseElection, key: String, record: LedRecord, logger: Logger) {
        self.election = election
        self.key = key
        self.logger = logger
        state = Mutex(State(written: record, pending: record.head))
        let timer = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: LedRefresher.interval)
                guard let self, !Task.isCancelled else { return }
                await self.write()
            }
        }
        state.withLock { $0.timer = timer }
    }

    /// Called on the node thread with the committed head.
    func committed(_ seq: UInt64) {
        let first = state.withLock { state -> Bool in
            state.pending = max(state.pending, seq)
            guard !state.firstDone, seq > state.written.head else { return false }
            state.firstDone = true
            return true
        }
        // The first commit past where leading began is the one an empty member must not miss.
        if first { Task { await self.write() } }
    }

    func stop() { state.withLock { $0.timer?.cancel() } }

    /// Writes the pending head if it is past the written one and no write is under way.
    private func write() async {
        let due: LedRecord? = state.withLock { state in
            guard !state.writing, state.pending > state.written.head else { return nil }
            state.writing = true
            var next = state.written
            next.head = state.pending
            return next
        }
        guard let due else { return }
        var written = false
        do {
            // Only while this leader still holds its lease: a successor's record is never overwritten.
            written = try await election.putWhileLeading(key, value: due.encoded())
        } catch {
            logger.warning("could not move the leader's record in etcd", metadata: ["key": "\(key)", "error": "\(error)"])
        }
        state.withLock { state in
            state.writing = false
            if written {
                state.written = due
                state.everWritten = true
            } else if !state.everWritten {
                // The first write is tried again with the next commit, not only by the timer.
                state.firstDone = false
            }
        }
    }
}

/// A member whose journal ends before the leader's record (a replaced or wiped disk, an old copy)
/// lacks acknowledged actions: it does not campaign until it has followed a leader and held all that
/// leader said was committed. An intact journal of a member that was in sync may: under sync
/// replication its leader acknowledged nothing it did not hold. Without a record (a new pair) anyone
/// may.
final class LedGate: Sendable {
    let client: any LeaseService
    let key: String
    let leaseMs: Int
    let logger: Logger
    private let warned = Atomic<Bool>(false)
    /// When an empty journal first asked to campaign in a pair that has not led (0: not yet).
    private let emptyAskedAtMs = Atomic<UInt64>(0)

    init(client: any LeaseService, key: String, leaseMs: Int, logger: Logger) {
        self.client = client
        self.key = LedGate.key(for: key)
        self.leaseMs = leaseMs
        self.logger = logger
    }

    static func key(for leaderKey: String) -> String { leaderKey + "/led" }

    /// Reads etcd's record of the last leader and gives the campaign rule's verdict with it.
    func allows(_ member: CampaignRule.Member) async -> Bool {
        var member = member
        let lastLeader: CampaignRule.LastLeader?
        var record: LedRecord?
        do {
            let held = try await client.value(at: key)
            record = held.flatMap(LedRecord.decode)
            lastLeader = held == nil ? CampaignRule.LastLeader.neverLed : record.map { .head($0.head) } ?? .unreadable
        } catch {
            lastLeader = nil  // etcd silent: no campaign could succeed either
        }
        if lastLeader == CampaignRule.LastLeader.neverLed && member.head == 0 {
            let now = MonotonicClock.nowMilliseconds()
            _ = emptyAskedAtMs.compareExchange(expected: 0, desired: now, ordering: .relaxed)
            member.emptyAskingMilliseconds = now - emptyAskedAtMs.load(ordering: .relaxed)
        }
        switch CampaignRule.verdict(member, lastLeader: lastLeader, read: true, leaseMilliseconds: UInt64(max(leaseMs, 0))) {
        case .campaign:
            return true
        case .lastLeaderUnknown where lastLeader == .unreadable:
            logger.error("the record of the last leader in etcd is not readable: not campaigning", metadata: ["key": "\(key)"])
        case .behindLastLeader(let committed):
            if !warned.exchange(true, ordering: .relaxed) {
                logger.warning(
                    "this journal ends before what the last leader committed: it lacks acknowledged actions, so this dispatcher will not lead until it has followed a leader (start the other one); if that one's journal is lost for good, delete the key to let this one lead",
                    metadata: [
                        "head": "\(member.head)", "last_leader": "\(record?.name ?? "")", "committed": "\(committed)", "key": "\(key)",
                    ])
            }
        default:
            break
        }
        return false
    }
}

/// A leader's answer to peers that claim a newer epoch (a hello or a refusal on the replication port):
/// it asks etcd whether it still holds the leader's key under its lease, one question at a time, and
/// steps down (`.leaseLost`) only when etcd says it does not. Claims that come while a question is out,
/// or within a second of the last answer, are covered by it: a forger flooding claims costs etcd at
/// most one read a second (a real successor is found by the lease's own clock meanwhile).
final class LeadershipClaims: Sendable {
    private let asking = Atomic<Bool>(false)
    /// When the last answer came (monotonic milliseconds).
    private let answeredAt = Atomic<UInt64>(0)
    static let quietMilliseconds: UInt64 = 1_000

    func verify(_ claim: String, election: any LeaseElection, control: NodeControl<DispatcherEvent>, logger: Logger) {
        let now = MonotonicClock.nowMilliseconds()
        let last = answeredAt.load(ordering: .acquiring)
        guard last == 0 || now >= last + Self.quietMilliseconds else { return }
        guard asking.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        Task { [self] in
            defer {
                self.answeredAt.store(max(1, MonotonicClock.nowMilliseconds()), ordering: .releasing)
                self.asking.store(false, ordering: .releasing)
            }
            do {
                if try await election.holdsKey() {
                    logger.warning("a peer claims a newer epoch, but etcd says this member leads: ignored", metadata: ["claim": "\(claim)"])
                } else {
                    control.post(.leaseLost("etcd names another leader (and \(claim))"))
                }
            } catch {
                // etcd unreachable: the lease's own clock decides, as for any leader that cannot reach it.
                logger.warning("a peer claims a newer epoch and etcd cannot be asked", metadata: ["claim": "\(claim)", "error": "\(error)"])
            }
        }
    }
}

@_spi(Simulation) import Dispatcher
import Examples
import FluxCore
import Foundation
import NodeCores
import Simulation
import Testing

extension SimulationOptions {
    /// The example apps under the stock binary's mix, as `zflux simulate` runs them.
    static var examples: SimulationOptions { SimulationOptions(apps: SimulatedApps(apps: Catalog.apps, mix: Catalog.simulationMix)) }

    /// The same, in the high-availability cluster: two dispatchers and a lease service.
    static var examplesHA: SimulationOptions {
        var options = SimulationOptions.examples
        options.ha = true
        return options
    }
}

@Suite("Deterministic simulation of the whole cluster", .serialized)
struct SimulationTests {
    // `make test` runs 2,000 seeds with `zflux simulate` before this suite, on both cores and alone (the
    // real-process tests beside it would starve). Here: the runner itself, on one core, over a few seeds.
    @Test("seeds under crashes, power cuts, partitions, chaos, overflows, freezes and clock jumps: every invariant holds")
    func manySeeds() {
        let summary = SimulationRunner.run(seeds: Array(10_001...10_030), options: SimulationOptions.examples, workers: 1)
        #expect(summary.seeds == 30)
        #expect(summary.faultsInjected > 30 * 5, "faults were injected")
        #expect(summary.invariantChecks > 30 * 1_000, "invariants were checked all along")
        #expect(
            summary.schedulesFired > 30 && summary.schedulesCancelled > 0 && summary.schedulesReplaced > 0,
            "schedules were made, fired, cancelled and replaced: \(summary.schedulesFired) fired of \(summary.schedulesMade)")
        for failure in summary.failures.prefix(3) {
            Issue.record("seed \(failure.seed) (fsync \(failure.fsync.rawValue)): \(failure.failure!.invariant): \(failure.failure!.detail)")
        }
    }

    @Test(
        "the report names each of the user's apps with its actions and schedules, and keeps the simulator's own echo app apart: its schedules are not counted in theirs"
    )
    func reportNamesTheUsersApps() throws {
        let options = SimulationOptions.examples
        let summary = SimulationRunner.run(seeds: Array(10_001...10_003), options: options, workers: 1)
        let report = SimulationReport(summary: summary, wallSeconds: 1, canary: nil, single: nil, traced: nil)
        let text = report.text()
        let users = options.apps.mix.apps
        #expect(!users.isEmpty && !users.contains("echo"))
        for app in users { #expect(text.contains("\napp \(app): "), "\(app) is named: \(text)") }
        let echo = try #require(text.split(separator: "\n").first { $0.contains("the simulator's own app") && $0.contains(" echo: ") }, "\(text)")
        #expect(echo.contains("cancelled"), "the echo app's schedules are on its own line: \(echo)")
        // The counter app schedules nothing: none of the echo app's schedules is counted for it.
        let counter = try #require(text.split(separator: "\n").first { $0.hasPrefix("app counter: ") }, "\(text)")
        #expect(counter.hasSuffix("no schedules"), "\(counter)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let apps = try #require(json["apps"] as? [String: Any], "\(report.json())")
        #expect(Set(users).isSubset(of: apps.keys) && apps["echo"] == nil, "\(apps.keys)")
        let simulator = try #require(json["simulator_apps"] as? [String: [String: Any]])
        #expect(Set(simulator.keys) == ["echo"] && (simulator["echo"]?["schedules_made"] as? Int ?? 0) > 0, "\(simulator)")
    }

    @Test(
        "poison actions (a reducer that traps on every 23rd ping), alone and in the HA cluster: stores die on them, ask for them to be quarantined, and every store and replica still ends equal to the history reduced without them",
        arguments: [false, true])
    func poisonIsQuarantined(ha: Bool) {
        var options = ha ? SimulationOptions.examplesHA : SimulationOptions.examples
        options.poison = true
        let summary = SimulationRunner.run(seeds: Array(30_001...30_030), options: options, workers: 1)
        #expect(summary.seeds == 30)
        #expect(
            summary.poisonCrashes > 30 && summary.quarantined > 10,
            "poison was met and quarantined: \(summary.poisonCrashes) deaths, \(summary.quarantined) quarantines")
        for failure in summary.failures.prefix(3) {
            Issue.record("seed \(failure.seed) (fsync \(failure.fsync.rawValue)): \(failure.failure!.invariant): \(failure.failure!.detail)")
        }
    }

    @Test("a seed replays bit for bit: same seed, same trace hash; another seed, another")
    func replay() {
        let first = Simulation(seed: 42, options: .examples).run(), again = Simulation(seed: 42, options: .examples).run(),
            other = Simulation(seed: 43, options: .examples).run()
        #expect(first.traceHash == again.traceHash && first.events == again.events && first.head == again.head)
        #expect(first.traceHash != other.traceHash)
        var traced = SimulationOptions.examples
        traced.traceLength = 50
        #expect(Simulation(seed: 42, options: traced).run().traceHash == first.traceHash, "keeping a trace changes nothing")
    }

    @Test(
        "seeds on disks that lie (syncs that fail and lose what they covered, misdirected writes, a full disk, slow syncs, a bit flipped at rest) and sends that fail, alone and in the HA cluster: every invariant holds",
        arguments: [false, true])
    func storageFaults(ha: Bool) {
        var options = ha ? SimulationOptions.examplesHA : SimulationOptions.examples
        options.storageFaults = true
        let summary = SimulationRunner.run(seeds: Array(40_001...40_060), options: options, workers: 1)
        #expect(summary.seeds == 60)
        #expect(
            summary.syncFailures > 0 && summary.diskErrorRestarts > 0,
            "the disks failed syncs (\(summary.syncFailures)) and dispatchers restarted on them (\(summary.diskErrorRestarts))")
        for failure in summary.failures.prefix(3) {
            Issue.record("seed \(failure.seed) (fsync \(failure.fsync.rawValue)): \(failure.failure!.invariant): \(failure.failure!.detail)")
        }
    }

    @Test("a single dispatcher whose journal has a bit flipped mid-segment refuses to serve: the seed stops there, nothing acknowledged dropped")
    func corruptJournalStops() throws {
        var options = SimulationOptions.examples
        options.storageFaults = true
        let stopped = try #require(
            (1...300 as ClosedRange<UInt64>).lazy.map { Simulation(seed: $0, options: options).run() }.first { $0.stopped != nil },
            "no seed of 300 flipped a bit the dispatcher then refused")
        #expect(stopped.failure == nil, "seed \(stopped.seed): \(stopped.failure.map { "\($0.invariant): \($0.detail)" } ?? "")")
        #expect(stopped.stopped?.contains("corrupt from seq") == true)
    }

    @Test("every canary (a rule broken on purpose) is caught within 500 seeds", arguments: Canary.allCases)
    func canaries(rule: Canary) {
        var options = rule.needsHA ? SimulationOptions.examplesHA : SimulationOptions.examples
        options.storageFaults = rule.needsStorageFaults
        options.fromSingle = rule.needsFromSingle
        options.canary = rule
        let summary = SimulationRunner.run(seeds: Array(1...500), options: options, stopAtFirstFailure: true, workers: 1)
        #expect(!summary.failures.isEmpty, "\(rule.rawValue) was not caught in 500 \(rule.needsHA ? "HA " : "")seeds")
    }

    @Test("drops-acknowledged is caught where a standby drops, at its leader's word, what a single dispatcher acknowledged")
    func dropsAcknowledgedIsCaught() {
        var options = SimulationOptions.examplesHA
        options.fromSingle = true
        options.canary = .dropsAcknowledged
        let summary = SimulationRunner.run(seeds: Array(1...500), options: options, stopAtFirstFailure: true, workers: 1)
        let caught = summary.failures.first?.failure
        #expect(caught?.invariant == "ACKs survive failover", "\(caught.map { "\($0.invariant): \($0.detail)" } ?? "not caught in 500 HA seeds")")
    }

    @Test(
        "a pair started from a single dispatcher's journal, whose empty member leads first in some seeds: the other refuses to drop what was acknowledged, the operator lets it lead, and every invariant holds"
    )
    func pairFromSingle() {
        var options = SimulationOptions.examplesHA
        options.fromSingle = true
        let summary = SimulationRunner.run(seeds: Array(50_001...50_060), options: options, workers: 1)
        #expect(summary.seeds == 60)
        #expect(summary.refusalsToDrop > 5, "members refused to drop acknowledged records: \(summary.refusalsToDrop) times")
        for failure in summary.failures.prefix(3) {
            Issue.record(
                "HA seed \(failure.seed) (fsync \(failure.fsync.rawValue)): \(failure.failure.map { "\($0.invariant): \($0.detail)" } ?? "")")
        }
    }

    @Test("schedule-fires-twice is caught in the HA cluster too, where a new leader fires again what its predecessor fired")
    func scheduleFiresTwiceAfterFailover() {
        var options = SimulationOptions.examplesHA
        options.canary = .scheduleFiresTwice
        let summary = SimulationRunner.run(seeds: Array(1...500), options: options, stopAtFirstFailure: true, workers: 1)
        let caught = summary.failures.first?.failure
        #expect(caught?.invariant == "a schedule fires once", "\(caught.map { "\($0.invariant): \($0.detail)" } ?? "not caught in 500 HA seeds")")
    }

    @Test(
        "HA seeds (a leader, its sync standby, a lease service) under the same faults and leaders frozen, cut off and lied to by their clocks: every invariant holds"
    )
    func manyHASeeds() {
        let seeds = Array(20_001...20_100) as [UInt64]
        let summary = SimulationRunner.run(seeds: seeds, options: .examplesHA, workers: 1)
        #expect(summary.seeds == 100)
        #expect(summary.faultsInjected > 100 * 5, "faults were injected")
        #expect(summary.invariantChecks > 100 * 500, "invariants were checked all along")
        #expect(summary.schedulesFired > 100, "schedules fired across failovers: \(summary.schedulesFired) of \(summary.schedulesMade)")
        for failure in summary.failures.prefix(3) {
            Issue.record(
                "HA seed \(failure.seed) (fsync \(failure.fsync.rawValue)): \(failure.failure.map { "\($0.invariant): \($0.detail)" } ?? "")")
        }
        // Leadership changed hands: not one leader that never failed.
        let won = seeds.prefix(20).map { Simulation(seed: $0, options: .examplesHA).run().leadershipsWon }
        #expect(won.allSatisfy { $0 >= 1 } && won.reduce(0, +) > 40, "leaderships won per seed: \(won)")
    }

    @Test("an HA seed replays bit for bit: same seed, same trace hash; another seed, another; and not the non-HA run's")
    func replayHA() {
        let first = Simulation(seed: 42, options: .examplesHA).run(), again = Simulation(seed: 42, options: .examplesHA).run(),
            other = Simulation(seed: 43, options: .examplesHA).run()
        #expect(first.traceHash == again.traceHash && first.events == again.events && first.head == again.head)
        #expect(first.traceHash != other.traceHash)
        #expect(first.traceHash != Simulation(seed: 42, options: .examples).run().traceHash)
        var traced = SimulationOptions.examplesHA
        traced.traceLength = 50
        #expect(Simulation(seed: 42, options: traced).run().traceHash == first.traceHash, "keeping a trace changes nothing")
    }

    @Test("an HA failure's trace tells leadership in words")
    func readableHATrace() throws {
        var options = SimulationOptions.examplesHA
        options.canary = .oldLeaderAcksAfterLease
        options.traceLength = 100_000
        let failed = try #require(
            (1...500 as ClosedRange<UInt64>).lazy.map { Simulation(seed: $0, options: options).run() }.first { $0.failure != nil })
        let trace = try #require(failed.failure).trace
        #expect(trace.contains { $0.contains("dispatcher 1 wins the lease at revision ") || $0.contains("dispatcher 2 wins the lease at revision ") })
        #expect(trace.contains { $0.contains("starts as a standby") })
        #expect(trace.contains { $0.contains(" steps down: ") })
        #expect(!trace.contains { $0.contains("event ") || $0.contains(" node ") })
    }

    @Test("a failure's trace reads as sentences that name the nodes, not as event codes")
    func readableTrace() throws {
        var options = SimulationOptions.examples
        options.canary = .dedup
        options.traceLength = 400
        let failed = try #require(
            (1...500 as ClosedRange<UInt64>).lazy.map { Simulation(seed: $0, options: options).run() }.first { $0.failure != nil })
        let trace = try #require(failed.failure).trace
        #expect(trace.count > 100)
        let codes = trace.filter { $0.contains("event ") || $0.contains(" node ") }
        #expect(codes.isEmpty, "\(codes.prefix(5).joined(separator: "\n"))")
        let applied = trace.compactMap { line -> String? in
            guard let range = line.range(of: "store "), line.contains(" receives ACTION seq ") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.map(String.init)
        }
        #expect(!applied.isEmpty && applied.allSatisfy { UInt64($0) == nil }, "stores by name: \(trace.suffix(20).joined(separator: "\n"))")
        #expect(trace.contains { $0.contains("dispatcher receives DISPATCH from client ") && !$0.contains("client id") })
        #expect(trace.contains { $0.contains("view of ") })
    }

    @Test("regression: a journal tail left in the page cache by a crash is forced to disk before it is trusted")
    func syncOnOpen() throws {
        // The first seed whose schedule shows the bug without the fix (the simulator found it this way)…
        var broken = SimulationOptions.examples
        broken.canary = .syncJournalOnOpen
        let found = try #require(
            (1...500 as ClosedRange<UInt64>).lazy.map { Simulation(seed: $0, options: broken).run() }.first { $0.failure != nil },
            "no seed of 500 shows a journal tail trusted without being synced")
        // …keeps every invariant with it.
        let fixed = Simulation(seed: found.seed, options: .examples).run()
        #expect(fixed.failure == nil, "seed \(found.seed): \(fixed.failure.map { "\($0.invariant): \($0.detail)" } ?? "")")
    }

    /// Seeds that broke an invariant while histories were built, each fixed since, with the load per
    /// client they were found with (it shapes the schedule):
    /// 299 a store behind a restored journal applied held-back actions of the old epoch;
    /// 566 a view took a late snapshot of an older epoch for a newer one;
    /// 1720 a late REPLAY-END made a store drop its state, and the rebuild ran effects again;
    /// 1047 a view applied queued updates of the discarded history on top of the new one;
    /// 16, 249 a store or view took a late message of a dead dispatcher's epoch for the current one;
    /// 3967 a store rebuilt after a restore, crashed, and came back from its snapshot of the old history;
    /// 2726 a store partitioned through the whole epoch that cut the journal followed the next one;
    /// 1531 a store that missed that epoch applied actions of the old history it had held back;
    /// 1500 the simulator moved a restored journal's dispatcher clock back before it started (a limit
    /// GUARANTEES names, which the simulator must not play: the stores then wait for good).
    @Test(
        "regression seeds of the histories",
        arguments: [(299, 40), (566, 40), (1720, 40), (1047, 40), (16, 40), (249, 40), (3967, 40), (2726, 40), (1531, 30), (1500, 30)]
            as [(UInt64, Int)])
    func historySeeds(seed: UInt64, actionsPerClient: Int) {
        var options = SimulationOptions.examples
        options.actionsPerClient = actionsPerClient
        let result = Simulation(seed: seed, options: options).run()
        #expect(result.failure == nil, "seed \(seed): \(result.failure.map { "\($0.invariant): \($0.detail)" } ?? "")")
    }
}

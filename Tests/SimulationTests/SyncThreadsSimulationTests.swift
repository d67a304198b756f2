import Examples
import FluxCore
import NodeCores
import Testing

@testable import Simulation

/// The simulator with the leading dispatcher's pipelined group commit (`zflux simulate --sync-threads`):
/// the real `PipelinedSync` over the simulated disk's syncs in flight.
@Suite("Deterministic simulation: the pipelined group commit", .serialized)
struct SyncThreadsSimulationTests {
    static var options: SimulationOptions {
        var options = SimulationOptions.examples
        options.syncThreads = true
        return options
    }

    /// Seeds whose fsync policy is `batch`, the only one that pipelines (the seed draws it).
    static func batchSeeds(_ count: Int, options: SimulationOptions) -> [UInt64] {
        Array((1...UInt64(count * 4)).lazy.filter { Simulation(seed: $0, options: options).fsync == .batch }.prefix(count))
    }

    @Test("seeds with two syncs in flight: every invariant holds, and syncs return before older ones and the loop waits for a lane")
    func seeds() {
        let summary = SimulationRunner.run(seeds: Array(20_001...20_030), options: Self.options, workers: 1)
        #expect(summary.seeds == 30)
        #expect(summary.lanes.syncs > 100 && summary.lanes.outOfOrder > 0 && summary.lanes.waits > 0, "\(summary.lanes)")
        for failure in summary.failures.prefix(3) {
            Issue.record("seed \(failure.seed) (fsync \(failure.fsync.rawValue)): \(failure.failure.map { "\($0.invariant): \($0.detail)" } ?? "")")
        }
    }

    @Test(
        "on a lying disk: a lane's sync fails while the other is in flight, the disk fills with one in flight, the power goes with one in flight, and every invariant holds"
    )
    func storageFaults() {
        var options = Self.options
        options.storageFaults = true
        let summary = SimulationRunner.run(seeds: Array(20_001...20_030), options: options, workers: 1)
        let lanes = summary.lanes
        #expect(lanes.failedWhileOtherInFlight > 0 && lanes.fullWhileInFlight > 0 && lanes.powerCutsWhileInFlight > 0, "\(lanes)")
        for failure in summary.failures.prefix(3) {
            Issue.record("seed \(failure.seed) (fsync \(failure.fsync.rawValue)): \(failure.failure.map { "\($0.invariant): \($0.detail)" } ?? "")")
        }
    }

    @Test(
        "the canaries of the durable ACK are caught in seeds that pipeline their syncs (fsync batch)",
        arguments: [Canary.durableBeforeAck, .releaseBeforeSync, .trustsFailedFsync])
    func canaries(rule: Canary) {
        var options = Self.options
        options.storageFaults = rule.needsStorageFaults
        options.canary = rule
        let summary = SimulationRunner.run(seeds: Self.batchSeeds(300, options: options), options: options, stopAtFirstFailure: true, workers: 1)
        #expect(summary.failures.first?.fsync == .batch, "\(rule.rawValue) was not caught in 300 seeds with fsync batch")
    }

    @Test(
        "trusts-failed-fsync is caught where a lane's sync fails and the dispatcher trusts it: the lanes' failures go through the interpreter's rule for a failed sync (seed 14)"
    )
    func trustedLaneFailure() {
        var options = Self.options
        options.storageFaults = true
        options.canary = .trustsFailedFsync
        let result = Simulation(seed: 14, options: options).run()
        #expect(result.fsync == .batch && result.lanes.failedWhileOtherInFlight > 0, "\(result.lanes)")
        #expect(result.failure != nil, "the canary was not caught: a lane's failed sync never reached the interpreter's rule")
    }

    @Test("without the flag a seed replays as it did before the lanes: the flag changes only the seeds that pipeline")
    func flagOnlyMovesBatchSeeds() {
        for seed in UInt64(1)...8 {
            let plain = Simulation(seed: seed, options: .examples).run()
            let lanes = Simulation(seed: seed, options: Self.options).run()
            #expect(plain.failure == nil && lanes.failure == nil)
            if plain.fsync == .batch {
                #expect(lanes.lanes.syncs > 0 && plain.lanes.syncs == 0)
            } else {
                #expect(plain.traceHash == lanes.traceHash, "seed \(seed), fsync \(plain.fsync.rawValue): nothing pipelines")
            }
        }
    }
}

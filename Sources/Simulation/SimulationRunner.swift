import Dispatch
import FluxCore
import Foundation
import Synchronization

/// Many seeds, spread over the machine's cores: each seed is its own single-threaded world.
public enum SimulationRunner {
    public struct Summary: Sendable {
        public var seeds = 0
        public var faultsInjected = 0
        public var invariantChecks = 0
        public var events = 0
        public var simulatedMicros: UInt64 = 0
        /// With poison: stores that died on a poison action, and actions quarantined.
        public var poisonCrashes = 0
        public var quarantined = 0
        /// With storage faults: syncs that failed (EIO), dispatchers that exited on a disk error and were
        /// started again, and seeds that ended with a single dispatcher refusing a corrupt journal.
        public var syncFailures = 0
        public var diskErrorRestarts = 0
        public var stoppedOnCorruption = 0
        /// HA: members that refused to drop records their leader lacked (with ``SimulationOptions/fromSingle``).
        public var refusalsToDrop = 0
        /// With ``SimulationOptions/syncThreads``: what the sync lanes went through, over every seed.
        public var lanes = SimulationResult.LaneCounts()
        /// Schedules made, and fired, cancelled, replaced and left pending, over the seeds that ended well:
        /// the sums of ``apps``.
        public var schedulesMade: Int { total.schedulesMade }
        public var schedulesFired: Int { total.schedulesFired }
        public var schedulesCancelled: Int { total.schedulesCancelled }
        public var schedulesReplaced: Int { total.schedulesReplaced }
        public var schedulesPending: Int { total.schedulesPending }
        private var total: SimulationResult.AppCounts { apps.values.reduce(into: SimulationResult.AppCounts()) { $0.add($1) } }
        /// The same, and the actions, per app by name (``SimulationResult/apps``).
        public var apps: [String: SimulationResult.AppCounts] = [:]
        /// Failed seeds, in seed order.
        public var failures: [SimulationResult] = []
    }

    /// Runs `seeds`; with `stopAtFirstFailure`, seeds after a failing one are skipped (a canary run).
    /// `progress` is called now and then with the number of seeds done (from any thread).
    public static func run(
        seeds: [UInt64], options: SimulationOptions, stopAtFirstFailure: Bool = false, workers: Int? = nil,
        progress: @escaping @Sendable (Int) -> Void = { _ in }
    ) -> Summary {
        let summary = Mutex(Summary())
        let next = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let workers = max(1, workers ?? ProcessInfo.processInfo.activeProcessorCount)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while !stop.load(ordering: .relaxed) {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < seeds.count else { return }
                let result = Simulation(seed: seeds[index], options: options).run()
                let done = summary.withLock { s -> Int in
                    s.seeds += 1
                    s.faultsInjected += result.faultsInjected
                    s.invariantChecks += result.invariantChecks
                    s.events += result.events
                    s.simulatedMicros += result.simulatedMicros
                    s.poisonCrashes += result.poisonCrashes
                    s.quarantined += result.quarantined
                    s.syncFailures += result.syncFailures
                    s.diskErrorRestarts += result.diskErrorRestarts
                    if result.stopped != nil { s.stoppedOnCorruption += 1 }
                    s.refusalsToDrop += result.refusalsToDrop
                    s.lanes.add(result.lanes)
                    for (app, counts) in result.apps { s.apps[app, default: .init()].add(counts) }
                    if result.failure != nil { s.failures.append(result) }
                    return s.seeds
                }
                if result.failure != nil && stopAtFirstFailure { stop.store(true, ordering: .relaxed) }
                if done % 100 == 0 { progress(done) }
            }
        }
        return summary.withLock { s in
            s.failures.sort { $0.seed < $1.seed }
            return s
        }
    }
}

import ArgumentParser
import FluxCore
import Foundation
import NodeCores
import NodeSupport
import Simulation

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run the whole cluster in a deterministic simulator, under faults, and check its invariants.",
        discussion: """
            Each seed is one run of a dispatcher, a store per app of the binary's simulation mix (the first app \
            also gets a replica without effects) plus an echo app whose effects answer every ping, \
            a view per store and three retrying clients, on a simulated network, disk and clock, all in this \
            process. The nodes' decisions are the real cores; the simulator injects crashes and restarts, \
            power cuts (unsynced writes lost, the last write torn, a sector corrupted), partitions, dropped, \
            duplicated and reordered messages, subscribers overflowing, frozen processes and clock jumps, \
            and checks every invariant of the design all along (docs/GUARANTEES.md lists them). A failure \
            prints its seed, the invariant broken and the events before it; `--seed S` replays it exactly.

            With --ha, each seed runs the high-availability cluster instead (docs/OPERATIONS.md, High availability): two dispatchers, \
            each with its own journal, and a simulated lease service (etcd) they campaign at. The winner \
            leads in the epoch its revision names and ACKs only what its standby holds durable too (sync); \
            leases run out on the dispatchers' own drifting clocks, and leaders are frozen past their \
            lease, cut off from their standby or the lease service, and given clocks that stall. The \
            checker adds: one dispatcher ACKs per epoch, an ACKed action is on both disks when it is \
            ACKed, and every later leader's journal holds it.

            Canaries break one rule on purpose to show that the checker catches it: `--list-canaries`, \
            then `--canary NAME` (exit 0 when it was caught); the canaries of high availability run with --ha.

            Examples:
              zflux simulate --seeds 2000
              zflux simulate --seed 1234 --json
              zflux simulate --canary no-dedup
              zflux simulate --seeds 2000 --ha
              zflux simulate --ha --canary ack-before-replicated
            """)

    @Option(help: "How many seeds to run (from --first-seed on).") var seeds = 1000
    @Option(help: "The first seed of the range.") var firstSeed: UInt64 = 1
    @Option(help: "Run one seed only, printing its trace hash (same seed, same hash).") var seed: UInt64?
    @Option(help: "Break this rule on purpose (see --list-canaries); exit 0 when a seed catches it.") var canary: String?
    @Flag(help: "List the canaries.") var listCanaries = false
    @Option(help: "Events of trace to print for a failure.") var trace = 40
    @Flag(help: "Print one JSON object.") var json = false
    @Flag(help: "Run the high-availability cluster: two dispatchers (a leader and its sync standby) and a lease service.")
    var ha = false
    @Flag(
        help:
            "Poison some actions: the echo app's reducer traps on every 23rd ping, and each store that dies twice on one asks for it to be quarantined; every replica must still end equal."
    )
    var poison = false
    @Flag(
        help:
            "Let the disk and the network lie: syncs that fail (EIO) and lose what they covered, writes misdirected, a full disk, slow syncs, a bit flipped at rest, sends that fail."
    )
    var storageFaults = false
    @Flag(
        help:
            "Start the pair from a single dispatcher's journal on dispatcher 1, dispatcher 2 empty; in half the seeds dispatcher 1 is down at first and the empty one leads, so dispatcher 1 must refuse to drop what was acknowledged (implies --ha)."
    )
    var fromSingle = false
    @Flag(
        help:
            "Pipeline the leading dispatcher's syncs as ZFLUX_SYNC_THREADS=2 does, in the seeds with fsync batch: two syncs in flight, returning in either order, each making durable what the journal held when it began."
    )
    var syncThreads = false

    func validate() throws {
        guard seeds >= 1, seeds <= 100_000_000 else { throw ValidationError("--seeds must be 1…100000000") }
        if let canary, Canary(rawValue: canary) == nil {
            throw ValidationError("unknown canary '\(canary)' (--list-canaries lists them)")
        }
    }

    func run() throws {
        if listCanaries {
            let width = Canary.allCases.map(\.rawValue.count).max() ?? 0
            for rule in Canary.allCases {
                emitLine(
                    "\(rule.rawValue.padding(toLength: width, withPad: " ", startingAt: 0))  \(rule.summary)\(rule.needsHA && !rule.needsFromSingle ? " (runs with --ha)" : "")\(rule.needsStorageFaults ? " (runs with --storage-faults)" : "")\(rule.needsFromSingle ? " (runs with --from-single)" : "")"
                )
            }
            return
        }
        let host = ZFluxCLI.Host.current
        let apps = SimulatedApps(apps: host.apps, mix: host.simulationMix)
        guard !apps.mix.entries.isEmpty else {
            throw CLIError("\(RootCommand.binaryName) hosts no app with an action to simulate (ZFluxCLI.Host.simulationMix)")
        }
        var options = SimulationOptions(apps: apps)
        options.canary = canary.flatMap(Canary.init(rawValue:))
        // A canary of high availability runs in the HA cluster, with or without --ha.
        let ha = ha || fromSingle || options.canary?.needsHA == true
        options.ha = ha
        options.poison = poison
        // A canary of a lying disk or network runs with storage faults, with or without --storage-faults.
        options.storageFaults = storageFaults || options.canary?.needsStorageFaults == true
        // A canary of a pair started from a single dispatcher's journal runs that way, with or without --from-single.
        options.fromSingle = fromSingle || options.canary?.needsFromSingle == true
        options.syncThreads = syncThreads
        let list: [UInt64] = seed.map { [$0] } ?? (0..<UInt64(seeds)).map { firstSeed &+ $0 }
        let started = ContinuousClock.now
        let total = list.count, isCanary = options.canary != nil
        let summary = SimulationRunner.run(seeds: list, options: options, stopAtFirstFailure: isCanary) { done in
            StandardOutput.error("\(RootCommand.binaryName) simulate: \(done) of \(total) seeds\n")
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        // A failure is run again, keeping its trace: the seed replays bit for bit.
        var traced: SimulationResult?
        if let first = summary.failures.first {
            var again = options
            again.traceLength = trace
            traced = Simulation(seed: first.seed, options: again).run()
        }
        var report = SimulationReport(
            summary: summary, wallSeconds: seconds, canary: canary, single: seed.map { Simulation(seed: $0, options: options).run() },
            traced: traced)
        report.ha = ha
        report.storageFaults = options.storageFaults
        report.fromSingle = options.fromSingle
        report.syncThreads = options.syncThreads
        emitLine(json ? report.json() : report.text(program: RootCommand.binaryName))
        if isCanary {
            if summary.failures.isEmpty { throw ExitCode(1) }
        } else if !summary.failures.isEmpty {
            throw ExitCode(1)
        }
    }
}

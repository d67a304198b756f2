import ArgumentParser
import FluxCore
import Foundation
import Simulation

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run the whole cluster in a deterministic simulator, under faults, and check its invariants.",
        discussion: """
            Each seed is one run of a dispatcher, five stores (a replica, a waitFor pair, an app with effects),
            a view per store and three retrying clients, on a simulated network, disk and clock, all in this
            process. The nodes' decisions are the real cores; the simulator injects crashes and restarts,
            power cuts (unsynced writes lost, the last write torn, a sector corrupted), partitions, dropped,
            duplicated and reordered messages, subscribers overflowing, frozen processes and clock jumps,
            and checks every invariant of DESIGN §3 all along (docs/GUARANTEES.md lists them). A failure
            prints its seed, the invariant broken and the events before it; `--seed S` replays it exactly.

            Canaries break one rule on purpose to show that the checker catches it: `--list-canaries`,
            then `--canary NAME` (exit 0 when it was caught).

            Examples:
              zflux simulate --seeds 2000
              zflux simulate --seed 1234 --json
              zflux simulate --canary no-dedup
            """)

    @Option(help: "How many seeds to run (from --first-seed on).") var seeds = 1000
    @Option(help: "The first seed of the range.") var firstSeed: UInt64 = 1
    @Option(help: "Run one seed only, printing its trace hash (same seed, same hash).") var seed: UInt64?
    @Option(help: "Break this rule on purpose (see --list-canaries); exit 0 when a seed catches it.") var canary: String?
    @Flag(help: "List the canaries.") var listCanaries = false
    @Option(help: "Events of trace to print for a failure.") var trace = 40
    @Flag(help: "Print one JSON object.") var json = false

    func validate() throws {
        guard seeds >= 1, seeds <= 100_000_000 else { throw ValidationError("--seeds must be 1…100000000") }
        if let canary, BrokenRule(rawValue: canary) == nil {
            throw ValidationError("unknown canary '\(canary)' (--list-canaries lists them)")
        }
    }

    func run() throws {
        if listCanaries {
            for rule in BrokenRule.allCases { emitLine("\(rule.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)) \(rule.summary)") }
            return
        }
        var options = SimulationOptions()
        options.canary = canary.flatMap(BrokenRule.init(rawValue:))
        let list: [UInt64] = seed.map { [$0] } ?? (0..<UInt64(seeds)).map { firstSeed &+ $0 }
        let started = ContinuousClock.now
        let total = list.count, isCanary = options.canary != nil
        let summary = SimulationRunner.run(seeds: list, options: options, stopAtFirstFailure: isCanary) { done in
            FileHandle.standardError.write(Data("zflux simulate: \(done) of \(total) seeds\n".utf8))
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
        let single = seed.map { Simulation(seed: $0, options: options).run() }
        if json {
            var object: [String: JSONValue] = [
                "seeds": .int(summary.seeds), "faults_injected": .int(summary.faultsInjected),
                "invariant_checks": .int(summary.invariantChecks), "events": .int(summary.events),
                "simulated_seconds": .double(Double(summary.simulatedMicros) / 1e6), "wall_seconds": .double(seconds),
                "failures": .array(
                    summary.failures.map { result in
                        .object([
                            "seed": .int(Int(result.seed)), "invariant": .string(result.failure?.invariant ?? ""),
                            "detail": .string(result.failure?.detail ?? ""), "fsync": .string(result.fsync.rawValue),
                        ])
                    }),
            ]
            if let canary { object["canary"] = .string(canary) }
            if let single {
                object["trace_hash"] = .string(String(single.traceHash, radix: 16))
                object["fsync"] = .string(single.fsync.rawValue)
                object["head"] = .int(Int(single.head))
                object["acknowledged"] = .int(single.actionsAcknowledged)
            }
            emitLine(JSONValue.object(object).text)
        } else {
            emitLine(
                String(
                    format: "%d seeds in %.1f s: %d faults injected, %d invariant checks, %d events, %.0f s simulated",
                    summary.seeds, seconds, summary.faultsInjected, summary.invariantChecks, summary.events, Double(summary.simulatedMicros) / 1e6))
            if let single {
                emitLine(
                    "seed \(single.seed): fsync \(single.fsync.rawValue), head \(single.head), trace hash \(String(single.traceHash, radix: 16))")
            }
            if let traced, let failure = traced.failure {
                emitLine("\(summary.failures.count) seed(s) failed; the first is seed \(traced.seed) (fsync \(traced.fsync.rawValue)):")
                emitLine("  invariant broken: \(failure.invariant)")
                emitLine("  \(failure.detail)")
                emitLine("  at \(Double(failure.atMicros) / 1000) ms; the events before it:")
                for line in failure.trace { emitLine("    \(line)") }
                emitLine("replay it with: zflux simulate --seed \(traced.seed)\(canary.map { " --canary \($0)" } ?? "")")
            } else if summary.failures.isEmpty {
                emitLine(isCanary ? "the canary was NOT caught" : "every invariant held")
            }
        }
        if isCanary {
            if summary.failures.isEmpty { throw ExitCode(1) }
        } else if !summary.failures.isEmpty {
            throw ExitCode(1)
        }
    }
}

/// Just enough JSON for a report, with sorted keys.
enum JSONValue {
    case int(Int), double(Double), string(String), array([JSONValue]), object([String: JSONValue])

    var text: String {
        switch self {
        case .int(let n): "\(n)"
        case .double(let d): String(format: "%.3f", d)
        case .string(let s): String(decoding: (try? JSONEncoder().encode(s)) ?? Data("\"\"".utf8), as: UTF8.self)
        case .array(let items): "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let fields): "{" + fields.keys.sorted().map { "\(JSONValue.string($0).text):\(fields[$0]!.text)" }.joined(separator: ",") + "}"
        }
    }
}

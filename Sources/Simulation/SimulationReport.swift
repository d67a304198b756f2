import Foundation

/// What `zflux simulate` prints: a line of totals (or one JSON object), and for a failure its seed, the
/// invariant broken, and the events before it.
public struct SimulationReport: Sendable {
    public var summary: SimulationRunner.Summary
    public var wallSeconds: Double
    /// The canary run, if any (then a failure is the expected outcome).
    public var canary: String?
    /// The one seed run with `--seed`.
    public var single: SimulationResult?
    /// The first failure, run again with its trace.
    public var traced: SimulationResult?
    /// The seeds ran the high-availability cluster (`--ha`).
    public var ha = false
    /// The other options a failing seed replays with: `--storage-faults`, `--from-single`, `--sync-threads`.
    public var storageFaults = false
    public var fromSingle = false
    public var syncThreads = false

    public init(summary: SimulationRunner.Summary, wallSeconds: Double, canary: String?, single: SimulationResult?, traced: SimulationResult?) {
        self.summary = summary
        self.wallSeconds = wallSeconds
        self.canary = canary
        self.single = single
        self.traced = traced
    }

    /// At least `seeds`, `faults_injected`, `invariant_checks` and `failures`; for one seed, `trace_hash`.
    public func json() -> String {
        var object: [String: JSONValue] = [
            "seeds": .int(summary.seeds), "faults_injected": .int(summary.faultsInjected),
            "invariant_checks": .int(summary.invariantChecks), "events": .int(summary.events),
            "simulated_seconds": .double(Double(summary.simulatedMicros) / 1e6), "wall_seconds": .double(wallSeconds),
            "failures": .array(
                summary.failures.map { result in
                    .object([
                        "seed": .int(Int(result.seed)), "invariant": .string(result.failure?.invariant ?? ""),
                        "detail": .string(result.failure?.detail ?? ""), "fsync": .string(result.fsync.rawValue),
                    ])
                }),
        ]
        if summary.poisonCrashes > 0 {
            object["poison_crashes"] = .int(summary.poisonCrashes)
            object["quarantined"] = .int(summary.quarantined)
        }
        if summary.syncFailures + summary.diskErrorRestarts + summary.stoppedOnCorruption > 0 {
            object["sync_failures"] = .int(summary.syncFailures)
            object["disk_error_restarts"] = .int(summary.diskErrorRestarts)
            object["stopped_on_corruption"] = .int(summary.stoppedOnCorruption)
        }
        if summary.refusalsToDrop > 0 { object["refusals_to_drop"] = .int(summary.refusalsToDrop) }
        if summary.lanes.syncs > 0 {
            let lanes = summary.lanes
            object["sync_lanes"] = .object([
                "syncs": .int(lanes.syncs), "waits": .int(lanes.waits), "out_of_order": .int(lanes.outOfOrder),
                "failed_while_other_in_flight": .int(lanes.failedWhileOtherInFlight), "full_while_in_flight": .int(lanes.fullWhileInFlight),
                "power_cuts_while_in_flight": .int(lanes.powerCutsWhileInFlight),
            ])
        }
        // Per app: the user's under "apps", the simulator's own echo app apart under "simulator_apps".
        func counts(_ counts: SimulationResult.AppCounts) -> JSONValue {
            .object([
                "actions": .int(counts.actions), "schedules_made": .int(counts.schedulesMade), "schedules_fired": .int(counts.schedulesFired),
                "schedules_cancelled": .int(counts.schedulesCancelled), "schedules_replaced": .int(counts.schedulesReplaced),
                "schedules_pending_at_end": .int(counts.schedulesPending),
            ])
        }
        let (simulator, users) = appsApart
        object["apps"] = .object(Dictionary(uniqueKeysWithValues: users.map { ($0.name, counts($0.counts)) }))
        object["simulator_apps"] = .object(Dictionary(uniqueKeysWithValues: simulator.map { ($0.name, counts($0.counts)) }))
        if let canary { object["canary"] = .string(canary) }
        if let single {
            object["trace_hash"] = .string(String(single.traceHash, radix: 16))
            object["fsync"] = .string(single.fsync.rawValue)
            object["head"] = .int(Int(single.head))
            object["acknowledged"] = .int(single.actionsAcknowledged)
        }
        return JSONValue.object(object).text
    }

    /// The apps of the seeds, by name: the simulator's own, and the user's.
    private var appsApart:
        (simulator: [(name: String, counts: SimulationResult.AppCounts)], users: [(name: String, counts: SimulationResult.AppCounts)])
    {
        let all = summary.apps.sorted { $0.key < $1.key }.map { (name: $0.key, counts: $0.value) }
        return (all.filter { SimulationResult.simulatorApps.contains($0.name) }, all.filter { !SimulationResult.simulatorApps.contains($0.name) })
    }

    /// For people; `program` is the binary's name, in the command that replays a failing seed.
    public func text(program: String = "zflux") -> String {
        var lines = [
            "\(summary.seeds) seed\(summary.seeds == 1 ? "" : "s") in "
                + String(
                    format: "%.1f s: %d faults injected, %d invariant checks, %d events, %.0f s simulated",
                    wallSeconds, summary.faultsInjected, summary.invariantChecks, summary.events, Double(summary.simulatedMicros) / 1e6)
        ]
        // Each of the user's apps by name, then the simulator's own apart: its schedules are not the user's.
        func line(_ name: String, _ counts: SimulationResult.AppCounts) -> String {
            let schedules =
                counts.schedulesMade == 0
                ? "no schedules"
                : "schedules: \(counts.schedulesMade) made; \(counts.schedulesFired) fired, \(counts.schedulesCancelled) cancelled, "
                    + "\(counts.schedulesReplaced) replaced, \(counts.schedulesPending) not due yet when the seed ended"
            return "\(name): \(counts.actions) actions; \(schedules)"
        }
        let (simulator, users) = appsApart
        for app in users { lines.append("app " + line(app.name, app.counts)) }
        for app in simulator {
            lines.append("the simulator's own app (its effects and schedules check zflux, beside yours) " + line(app.name, app.counts))
        }
        if summary.poisonCrashes > 0 {
            lines.append("poison: stores died \(summary.poisonCrashes) times on poison actions; \(summary.quarantined) quarantines")
        }
        if summary.syncFailures + summary.diskErrorRestarts + summary.stoppedOnCorruption > 0 {
            lines.append(
                "disks: \(summary.syncFailures) syncs failed, \(summary.diskErrorRestarts) restarts of a dispatcher on a disk error, "
                    + "\(summary.stoppedOnCorruption) seeds ended with the dispatcher refusing a corrupt journal")
        }
        if summary.refusalsToDrop > 0 {
            lines.append(
                "pair from a single dispatcher's journal: a member refused \(summary.refusalsToDrop) times to drop what was acknowledged, "
                    + "and the operator let it lead first")
        }
        if summary.lanes.syncs > 0 {
            let lanes = summary.lanes
            lines.append(
                "sync lanes: \(lanes.syncs) syncs, \(lanes.waits) waits for one in flight, \(lanes.outOfOrder) returned before an older one, "
                    + "\(lanes.failedWhileOtherInFlight) failed while the other was in flight, \(lanes.fullWhileInFlight) writes refused "
                    + "by a full disk with one in flight, \(lanes.powerCutsWhileInFlight) power cuts with one in flight")
        }
        if let single {
            lines.append(
                "seed \(single.seed): fsync \(single.fsync.rawValue), head \(single.head), trace hash \(String(single.traceHash, radix: 16))")
        }
        if let traced, let failure = traced.failure {
            if let canary {
                lines.append(
                    "the canary \(canary) was caught, as it should be: seed \(traced.seed) (fsync \(traced.fsync.rawValue)) broke an invariant.")
            } else {
                let count = summary.failures.count
                lines.append("\(count) seed\(count == 1 ? "" : "s") failed; the first is seed \(traced.seed) (fsync \(traced.fsync.rawValue)):")
            }
            lines.append("  invariant broken: \(failure.invariant)")
            lines.append("  \(failure.detail)")
            lines.append("  at \(Double(failure.atMicros) / 1000) ms; the events before it:")
            lines += failure.trace.map { "    " + $0 }
            let flags =
                (ha ? " --ha" : "") + (storageFaults ? " --storage-faults" : "") + (fromSingle ? " --from-single" : "")
                + (syncThreads ? " --sync-threads" : "")
            lines.append("replay it with: \(program) simulate --seed \(traced.seed)\(flags)\(canary.map { " --canary \($0)" } ?? "")")
        } else if summary.failures.isEmpty {
            lines.append(canary != nil ? "the canary was NOT caught" : "every invariant held")
        }
        return lines.joined(separator: "\n")
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
        case .object(let fields):
            "{" + fields.sorted(by: { $0.key < $1.key }).map { "\(JSONValue.string($0.key).text):\($0.value.text)" }.joined(separator: ",") + "}"
        }
    }
}

import ArgumentParser
import Bench
import FluxCore
import Foundation
import Logging
import NodeSupport
import Synchronization
import ViewNode
import ZeroMQ

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load-test dispatch latency and throughput against the raw libzmq floor.",
        discussion: """
            Starts a cluster of real processes with this binary (a dispatcher and --stores stores of each app \
            the load drives), or uses a running one with --attach, and drives it open loop: action i is due \
            i/rate seconds after the start and its latency counts from then, so stalls are not hidden \
            (coordinated omission). This process is both the client and the views: dispatch → ACK and \
            dispatch → state visible are taken on its own clock. The stages between come from the nodes' \
            timestamps (same host only).

            What it drives: by default the ledger app (ledger.open fills --state-items accounts, then \
            ledger.post); --app A --action T --payload JSON drives any app's action; --workload FILE a \
            weighted mix of actions with payload templates (${int A B}, ${pick x y}, ${seq} from 0, ${seq FIRST}), per-client \
            rates and a ramp, from a TOML file (docs/GUIDE.md §6). Apps this binary does not host are sent \
            JSON payloads, judged by the cluster's dispatcher, and followed by views that track versions \
            only. --baseline OLD.json compares the run with an earlier --json report and exits 1 when a \
            latency percentile, the CPU per action or the share of actions the store refused is worse by \
            more than --regression (any refusal, where the baseline had none); a percentile \
            with fewer than ten samples beyond it in either run (p99.9 of a run under 10,000 actions) is \
            listed as not compared rather than judged.

            Every option below is the load test's, `\(RootCommand.binaryName) bench run` (the default \
            subcommand): `\(RootCommand.binaryName) bench run --help` lists them all.

            Exit status: 0 when every action was acknowledged and seen in its app's views, some of them \
            perhaps refused by their store (the report counts them, "refused by the store", with the first \
            reason); 3 when one was lost, refused by the dispatcher or never answered, or when the store \
            refused every action; 1 on a regression against --baseline (compared only when nothing gave 3) \
            or bad input. A dispatch unanswered for a second is sent again with its \
            client id and seq, which the dispatcher deduplicates, so a run attached to a dispatcher pair \
            follows the leader through a failover (its latency still counts from the due instant).

            With --attach it also writes a live feed into the cluster's run directory, bench-live.jsonl \
            (replaced at each run): a line each second with what was sent and acknowledged and the ACK \
            latency's p50 and p99 that second, then the report --json prints. `\(RootCommand.binaryName) devtools` \
            plots it as the run goes.

            --floor runs the same topology in the same run as C programs on libzmq (zflux-floor, built \
            beside zflux: client, sequencer, one relay per store, sinks; no journal, no reducer, no codec), \
            probes write+fdatasync on the journal's filesystem, and prints every figure as a ratio to that \
            floor, CPU per action included. --max searches for the highest rate with zero loss that the \
            cluster sustains: a rate holds with nothing lost or refused, at least 95% of its target achieved \
            and an e2e p99 of at most 20 ms (a queue that grows shows in its latency first); --json \
            reports it as max.rate with the trials.

            A run at one rate also reads the dispatcher's status before and after it, and prints the \
            journal's own syncs in the run: how many, how many per action sent (warm-up included), and \
            the p50, p99 and longest of the dispatcher's newest syncs at the run's end (up to 1,024; \
            journal_syncs in --json: syncs, per_action, sampled, p50_us, p99_us, max_us). With --floor, \
            the quiet disk's write+fdatasync is printed beside it. Under fsync none the journal never \
            syncs, and there is no such line.

            On a VM the report also says how much of the machine's CPU time the hypervisor took during the \
            run (steal, from /proc/stat): a guest out of CPU quota is paused, and the pauses show in the \
            tails. Compare runs only when their steal is alike.

            Examples:
              zflux bench --rate 10000 --duration 10 --floor
              zflux bench --max --floor --fsync none
              zflux bench --state-items 10000 --rate 2000 --json
              zflux bench --attach --app todo --action addTodo \\
                --payload '{"title":"task ${seq}"}' --rate 500
              zflux bench --workload mix.toml --baseline yesterday.json --regression 15%
            """,
        subcommands: [Run.self, Codec.self],
        defaultSubcommand: Run.self
    )

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "run", abstract: "Run a load test (the default).")

        @Option(help: "ipc or tcp.") var transport: ClusterCommand.ClusterOptions.Transport = .ipc
        @Option(help: ArgumentHelp("tcp: the first of the ports used (the floor's relays use the next ones).", valueName: "port"))
        var basePort = 5670
        @Option(help: "Stores per app the load drives (the ledger app without --app or --workload; each a process).") var stores = 1
        @Option(help: "Views (subscribers in this process) per store.") var views = 1
        @Option(help: "Concurrent client connections sending in turn.") var clients = 1
        @Option(help: "Target rate, actions per second (with --max: the first rate tried).") var rate: Double = 10_000
        @Flag(help: "Search for the highest rate with zero loss.") var max = false
        @Option(help: "Seconds of measured load (per trial with --max).") var duration: Double = 5
        @Option(help: "Seconds of load before measuring (counted for loss, not for latency).") var warmUp: Double = 1
        @Option(help: "Approximate bytes of each action on the wire.") var payloadBytes = 64
        @Option(help: "Wire codec: binary or json.") var codec: WireCodec.Format = .binary
        @Option(help: "Journal fsync policy: always, batch or none.") var fsync: FsyncPolicy = Defaults.fsync
        @Option(help: "Accounts in the ledger state before the load starts (each action changes one).") var stateItems = 10
        @Flag(help: "Also measure raw libzmq relays in the same topology, and print ratios to them.") var floor = false
        @Flag(
            inversion: .prefixedNo,
            help: "Keep each node's threads on one CPU (cluster up --pin-cpus), and the floor's sequencer and relays on the same CPUs.")
        var pinCpus = true
        @Flag(
            help:
                "Measure a dispatcher pair (cluster up --ha: a private etcd, sync replication) after a single dispatcher in the same run, and print what replication costs."
        )
        var ha = false
        @Flag(help: "Use the cluster running in --run-dir instead of starting one (it needs stores of the apps driven).") var attach = false
        @Option(help: ArgumentHelp("Drive this app's action (with --action and --payload) instead of the ledger.", valueName: "app"))
        var app: String?
        @Option(help: ArgumentHelp("The action to drive (with --app).", valueName: "type")) var action: String?
        @Option(
            help: ArgumentHelp(
                "The action's arguments, a JSON object; a string value may be a template: ${int A B}, ${pick x y z}, ${seq} (from 0), ${seq FIRST}.",
                valueName: "json"))
        var payload: String?
        @Option(
            help: ArgumentHelp(
                "A TOML workload: a weighted mix of actions with payload templates, and [load] clients, rate_per_client and ramp_seconds (which override --clients and --rate).",
                valueName: "file"))
        var workload: String?
        @Option(
            help: ArgumentHelp(
                "Exit 3 when more than this share of the acknowledged actions were refused by their store (0%…100%). Default: only a run where every one was.",
                valueName: "percent"))
        var maxRefused: String?
        @Option(help: ArgumentHelp("An earlier --json report to compare with: exit 1 on a regression.", valueName: "file")) var baseline: String?
        @Option(help: ArgumentHelp("How much worse than --baseline a figure may be before it is a regression.", valueName: "percent"))
        var regression = "10%"
        @OptionGroup var runDir: RunDirOptions
        @Flag(help: "Print one JSON object instead of the table.") var json = false
        @Option(help: ArgumentHelp("Write the e2e HdrHistogram percentile distribution (.hgrm) here.", valueName: "file")) var hgrm: String?
        @Option(help: ArgumentHelp("Write an SVG plot of latency by percentile here.", valueName: "file")) var svg: String?
        @Flag(help: "Keep the temporary cluster's directory (logs, journal) after the run.") var keep = false

        func validate() throws {
            guard stores >= 1, stores <= 16 else { throw ValidationError("--stores must be 1…16") }
            guard views >= 1, views <= 16 else { throw ValidationError("--views must be 1…16") }
            guard clients >= 1, clients <= 64 else { throw ValidationError("--clients must be 1…64") }
            guard rate >= 1, rate <= 5_000_000 else { throw ValidationError("--rate must be 1…5000000") }
            guard duration > 0, duration <= 3600, warmUp >= 0, warmUp <= 600 else {
                throw ValidationError("--duration must be 0…3600 s and --warm-up 0…600 s")
            }
            guard payloadBytes >= 16, payloadBytes <= 1 << 20 else { throw ValidationError("--payload-bytes must be 16…1048576") }
            guard stateItems >= 1, stateItems <= 1_000_000 else { throw ValidationError("--state-items must be 1…1000000") }
            if workload != nil && (app != nil || action != nil || payload != nil) {
                throw ValidationError("--workload names its own actions: leave out --app, --action and --payload")
            }
            if (app == nil) != (action == nil) || (payload != nil && app == nil) {
                throw ValidationError("--app and --action go together (and --payload with them): --app APP --action TYPE [--payload JSON]")
            }
            _ = try threshold()
            _ = try maxRefusedPercent()
        }

        /// --max-refused as a percentage (10% → 10), nil when not given.
        func maxRefusedPercent() throws -> Double? {
            guard let maxRefused else { return nil }
            let text = maxRefused.hasSuffix("%") ? String(maxRefused.dropLast()) : maxRefused
            guard let percent = Double(text), percent >= 0, percent <= 100 else {
                throw ValidationError("--max-refused must be a percentage such as 5% (0…100)")
            }
            return percent
        }

        /// --regression as a fraction (10% → 0.1).
        func threshold() throws -> Double {
            let text = regression.hasSuffix("%") ? String(regression.dropLast()) : regression
            guard let percent = Double(text), percent >= 0, percent <= 100_000 else {
                throw ValidationError("--regression must be a percentage such as 10% (0…100000)")
            }
            return percent / 100
        }

        /// The `--svg` plot's lines: the two latencies, named after the binary that measured them
        /// (`zflux dispatch → view`, or a team's own `poll dispatch → view`), and the floor's when it ran.
        static func plotSeries(
            program: String, e2e: LatencyHistogram, ack: LatencyHistogram, floor: LatencyHistogram?
        ) -> [(name: String, histogram: LatencyHistogram)] {
            [("\(program) dispatch → view", e2e), ("\(program) dispatch → ack", ack)] + (floor.map { [("floor → sink", $0)] } ?? [])
        }

        func run() async throws {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = .warning
                return handler
            }
            // The run's cluster is stopped and its directory removed before anything is written: a reader
            // that has gone ends this process at the write (SIGPIPE), past any `defer`.
            var options = try options()
            var single: BenchOutcome? = nil
            if ha && !attach {
                // The single dispatcher first, in the same run, for the comparison.
                var first = options
                (first.ha, first.floor) = (false, false)
                let session = try BenchSession(options: first)
                single = try {
                    defer { session.shutdown() }
                    return try session.measure()
                }()
            }
            options.ha = ha && !attach
            let session = try BenchSession(options: options)
            let report = try {
                defer { session.shutdown() }
                return try session.measure()
            }()
            if let hgrm { try report.e2e.percentileDistribution.write(toFile: hgrm, atomically: true, encoding: .utf8) }
            if let svg {
                let series = Self.plotSeries(program: RootCommand.binaryName, e2e: report.e2e, ack: report.ack, floor: report.floor?.e2e)
                let title =
                    "\(RootCommand.binaryName) bench: \(transport.rawValue), \(BenchReport.rate(report.report.rateTarget)), fsync \(fsync.rawValue), \(stateItems) items"
                try PercentilePlot.svg(title: title, series: series).write(toFile: svg, atomically: true, encoding: .utf8)
            }
            if let single, !json { emitLine("single dispatcher:\n" + single.report.table() + "\n\ndispatcher pair (sync replication):") }
            emitLine(json ? report.report.json() : report.report.table())
            if let single {
                let (a, b) = (single.report, report.report)
                func delta(_ x: Double, _ y: Double) -> String { String(format: "%+.0f µs", y - x) }
                let cost =
                    "what sync replication costs: dispatch → ack p50 \(delta(a.ack.p50Us, b.ack.p50Us)), p99 \(delta(a.ack.p99Us, b.ack.p99Us)); "
                    + "dispatch → view p50 \(delta(a.e2e.p50Us, b.e2e.p50Us)), p99 \(delta(a.e2e.p99Us, b.e2e.p99Us))"
                if json { printError(cost) } else { emitLine("\n" + cost) }
            }
            // A run that lost or had refused any action proves nothing about latency: it fails (and is
            // never compared with a baseline).
            if report.report.lost > 0 { throw ExitCode(3) }
            let unanswered = report.report.sent - report.report.acked - report.report.nacked
            if unanswered > 0 {
                printError(
                    "\(unanswered) of \(report.report.sent) actions were never answered, though sent again "
                        + "for as long as the dispatcher could still deduplicate them")
                throw ExitCode(3)
            }
            if report.report.nacked > 0 || report.report.acked == 0 {
                printError(
                    "\(report.report.nacked) of \(report.report.sent) actions were refused by the dispatcher"
                        + (report.report.firstRefusal.map { ", the first because: \($0)" } ?? ""))
                throw ExitCode(3)
            }
            // Refused by the store: sequenced and shown, so not lost, but a run where the store refused
            // every action measured only refusals. Some refusals may be the workload's own (bids after a
            // close): they are reported, and --baseline fails the run when their share grows.
            if let refused = report.report.refusedByStore, refused > 0 {
                let why = report.report.firstStoreRefusal.map { ", the first because: \($0)" } ?? ""
                printError("\(refused) of \(report.report.acked) acknowledged actions were refused by the store\(why)")
                if refused == report.report.acked {
                    printError("every action was refused: the run measured refusals, not state changes; check the payload against the app's state")
                    throw ExitCode(3)
                }
            }
            if let percent = try maxRefusedPercent(), let failure = report.report.refusalGateFailure(maxPercent: percent) {
                printError(failure)
                throw ExitCode(3)
            }
            if let baseline {
                guard let data = FileManager.default.contents(atPath: baseline) else { throw CLIError("cannot read the baseline \(baseline)") }
                let verdict = try Baseline.compare(current: report.report, baseline: data, source: baseline, threshold: try threshold())
                // With --json, stdout stays one JSON document: the comparison goes to stderr.
                if json { printError(verdict.text()) } else { emitLine("\n" + verdict.text()) }
                if !verdict.regressions.isEmpty { throw ExitCode(1) }
            }
        }

        /// The parsed options as the bench library takes them.
        func options() throws -> BenchOptions {
            let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
            var options = BenchOptions(executable: executable)
            (options.transport, options.basePort, options.stores, options.views, options.clients) = (
                transport.topology, basePort, stores, views, clients
            )
            (options.rate, options.max, options.duration, options.warmUp) = (rate, max, duration, warmUp)
            (options.payloadBytes, options.codec, options.fsync, options.stateItems) = (payloadBytes, codec, fsync, stateItems)
            (options.floor, options.keep, options.pinCPUs) = (floor, keep, pinCpus)
            options.apps = ZFluxCLI.Host.current.apps
            if let workload {
                guard let text = try? String(contentsOfFile: workload, encoding: .utf8) else {
                    throw CLIError("cannot read the workload \(workload)")
                }
                let parsed = try Workload.parse(toml: text, source: workload)
                if let clients = parsed.clients { options.clients = clients }
                if let perClient = parsed.ratePerClient { options.rate = perClient * Double(options.clients) }
                options.workload = parsed
            } else if let app, let action {
                options.workload = try Workload.single(app: app, action: action, payload: payload ?? "")
            }
            if attach {
                let (topology, security) = try runDir.cluster()
                options.attach = .init(runDirectory: runDir.path, topology: topology, security: security)
            }
            return options
        }
    }
}

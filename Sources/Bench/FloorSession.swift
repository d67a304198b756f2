import Foundation
import NodeSupport
import Spawn

/// The floor: C programs on libzmq (`zflux-floor`, built beside `zflux`) in zflux's topology: a
/// sequencer where the dispatcher would be, one forward relay per store, as many sinks per relay as
/// views per store, and a client with the same schedule and wake-ups as the bench's own. Nothing of
/// zflux's code runs in it, so it cannot flatter zflux.
final class FloorSession {
    let options: BenchOptions
    let directory: String
    let program: String
    var relays: [BenchChild] = []
    let intake: String
    let sinks: [String]
    var trials = 0
    /// CPU seconds the floor's processes used in the last trial, by process.
    private(set) var lastUsage = ProcessUsage()
    /// Messages every sink received in the last trial (acknowledged actions × sinks).
    private(set) var lastDelivered = 0

    /// `zflux-floor` beside the `zflux` binary.
    static func program(beside executable: String) -> String {
        (executable as NSString).deletingLastPathComponent + "/zflux-floor"
    }

    /// `zflux-floor` beside `executable`, or an error that says how to build it there. Checked before
    /// a bench starts, so a run with `--floor` does not fail after its whole load.
    @discardableResult
    static func checkProgram(beside executable: String) throws(BenchError) -> String {
        let program = program(beside: executable)
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw BenchError(
                "--floor runs zflux-floor, which is not beside \((executable as NSString).lastPathComponent) (\(program)): "
                    + "`swift build --product zflux-floor` builds it there, in zflux's checkout and in a package that depends on zflux alike; "
                    + "nothing was run")
        }
        return program
    }

    init(options: BenchOptions, directory: String) throws {
        self.options = options
        self.directory = directory
        program = try FloorSession.checkProgram(beside: options.executable)
        func endpoint(_ name: String, _ offset: Int) -> String {
            options.transport == .tcp ? "tcp://127.0.0.1:\(options.basePort + 100 + offset)" : "ipc://\(directory)/floor-\(name)"
        }
        intake = endpoint("intake", 0)
        let published = endpoint("sequenced", 1)
        // Pinned as `cluster up --pin-cpus` pins the nodes: the sequencer where the dispatcher runs, relay
        // i where store i does (through taskset, so that libzmq's threads start there too).
        let (executable, pin) = (program, options.pinCPUs)
        let allowed = pin ? CPUAffinity.allowed() : []
        let taskset = ["/usr/bin/taskset", "/bin/taskset"].first { FileManager.default.isExecutableFile(atPath: $0) }
        func relay(_ name: String, node index: Int, _ arguments: [String]) throws -> BenchChild {
            guard pin, let taskset, let cpu = CPUAffinity.cpu(forNode: index, allowed: allowed) else {
                return try BenchChild(name: name, executable: executable, arguments: arguments)
            }
            return try BenchChild(name: name, executable: taskset, arguments: ["-c", String(cpu), executable] + arguments)
        }
        relays.append(try relay("floor sequencer", node: 0, ["sequencer", "--input", intake, "--publish", published]))
        var sinks: [String] = []
        for index in 1...options.stores {
            let out = endpoint("store-\(index)", 1 + index)
            relays.append(try relay("floor relay \(index)", node: index, ["forward", "--input", published, "--publish", out]))
            sinks.append(out)
        }
        self.sinks = sinks
    }

    func trial(rate: Double, session: BenchSession) throws -> TrialResult {
        trials += 1
        let schedule = OpenLoopSchedule(rate: rate, seconds: options.duration + options.warmUp)
        let base = "\(directory)/floor-trial-\(trials)"
        let payloadBytes = try session.mix().payload(of: 0).count
        let timeoutMs = Int(schedule.span / 1_000_000) + 60_000
        var sinkFiles: [String] = []
        var sinkChildren: [BenchChild] = []
        defer { for child in sinkChildren { child.stop() } }
        for (relay, endpoint) in sinks.enumerated() {
            for view in 1...options.views {
                let file = "\(base)-sink-\(relay + 1)-\(view)"
                sinkFiles.append(file)
                sinkChildren.append(
                    try BenchChild(
                        name: "floor sink", executable: program,
                        arguments: ["sink", "--input", endpoint, "--out", file, "--count", "\(schedule.count)", "--timeout-ms", "\(timeoutMs)"]))
            }
        }
        let relayPids = Dictionary(relays.map { ($0.name, $0.process.pid) }) { first, _ in first }
        let relaysBefore = ProcessUsage.now(relayPids)
        let clientFile = base + "-client"
        session.feed?.trial(rate: rate, label: "floor")
        BenchSession.progress("floor: \(BenchReport.rate(rate)) for \(BenchReport.number(options.duration + options.warmUp)) s")
        let client = try BenchChild(
            name: "floor client", executable: program,
            arguments: [
                "client", "--connect", intake, "--rate", "\(rate)", "--count", "\(schedule.count)", "--clients", "\(options.clients)",
                "--payload-bytes", "\(payloadBytes)", "--out", clientFile,
            ] + sinkFiles.flatMap { ["--ready", $0 + ".ready"] })
        defer { client.stop() }
        let deadline = Date().addingTimeInterval(Double(schedule.span) / 1e9 + 60)
        while client.process.isRunning {
            guard Date() < deadline else { throw BenchError("the floor's client did not finish within \(Int(Double(schedule.span) / 1e9 + 60)) s") }
            usleep(20_000)
        }
        guard client.process.termination == .exited(0) else {
            throw BenchError("the floor's client failed: \(client.lines.withLock { $0.suffix(5).joined(separator: "\n") })")
        }
        // The sinks stop by themselves once they saw every action; a lost one would keep them waiting.
        let sinksDeadline = Date().addingTimeInterval(5)
        while sinkChildren.contains(where: { $0.process.isRunning }) && Date() < sinksDeadline { usleep(20_000) }
        for child in sinkChildren { child.stop() }
        let (log, start) = try FloorFiles.clientLog(clientFile, schedule: schedule)
        let arrivals = try zip(sinkFiles, sinkChildren).map { file, child in
            guard FileManager.default.fileExists(atPath: file) else {
                let said = child.lines.withLock { $0.suffix(5).joined(separator: "\n") }
                throw BenchError(
                    "a floor sink wrote no \(file) (it ended with \(child.process.termination.map { "\($0)" } ?? "nothing yet"))"
                        + (said.isEmpty ? "" : ":\n" + said))
            }
            return try FloorFiles.arrivals(file, start: start)
        }
        lastDelivered = arrivals.reduce(0) { $0 + $1.count }
        // The relays live across trials: what they used during this one. The client and the sinks
        // each wrote what their whole life used.
        var usage = ProcessUsage.now(relayPids).since(relaysBefore)
        let clientUsage = FloorFiles.usage(clientFile)
        let sinks = sinkFiles.map(FloorFiles.usage)
        usage.cpuSeconds["floor client"] = clientUsage.cpuSeconds
        usage.contextSwitches["floor client"] = clientUsage.contextSwitches
        usage.cpuSeconds["floor sinks"] = sinks.reduce(0) { $0 + $1.cpuSeconds }
        usage.contextSwitches["floor sinks"] = sinks.reduce(0) { $0 + $1.contextSwitches }
        lastUsage = usage
        return Accounting.evaluate(log, subscribers: arrivals, warmUp: UInt64(options.warmUp * 1e9), startWall: 0)
    }

    /// Times write + fdatasync of a journal-sized record in the bench's directory (the journal's
    /// filesystem).
    func fsyncProbe() throws -> BenchReport.FsyncProbe {
        let process = try ChildProcess(
            executable: program, arguments: ["fsync", "--dir", directory, "--count", "500", "--bytes", "160"], output: .piped,
            errors: .discarded, ownProcessGroup: false)
        let data = process.standardOutput?.readDataToEndOfFile() ?? Data()
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        guard process.waitUntilExit() == .exited(0), let probe = try? decoder.decode(BenchReport.FsyncProbe.self, from: data) else {
            throw BenchError("the fsync probe failed in \(directory)")
        }
        return probe
    }

    func shutdown() {
        for relay in relays { relay.stop() }
    }
}

/// What the floor's C programs write (`Sources/zflux-floor/main.c` has the layout).
enum FloorFiles {
    static func words(_ path: String) throws -> [UInt64] {
        guard let data = FileManager.default.contents(atPath: path) else { throw BenchError("the floor wrote no \(path)") }
        return data.withUnsafeBytes { raw in (0..<(data.count / 8)).map { raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self) } }
    }

    /// The client's log, and its start (monotonic ns).
    static func clientLog(_ path: String, schedule: OpenLoopSchedule) throws -> (TrialLog, UInt64) {
        let words = try words(path)
        guard words.count == 2 + 2 * schedule.count else { throw BenchError("\(path) holds \(words.count) words, not \(2 + 2 * schedule.count)") }
        var log = TrialLog(schedule: schedule)
        log.sent = Int(words[1])
        for index in 0..<schedule.count where words[3 + 2 * index] != 0 {
            log.acknowledge(index: index, seq: words[3 + 2 * index], at: words[2 + 2 * index], sequencedAtNanoseconds: 0)
        }
        return (log, words[0])
    }

    /// A sink's arrivals, in times after `start`.
    static func arrivals(_ path: String, start: UInt64) throws -> [Arrival] {
        let words = try words(path)
        return stride(from: 0, to: words.count - 1, by: 2).map { Arrival(version: words[$0], at: words[$0 + 1] >= start ? words[$0 + 1] - start : 0) }
    }

    /// What a client or sink used in its life, from FILE.cpu: `µs context-switches`.
    static func usage(_ path: String) -> (cpuSeconds: Double, contextSwitches: Double) {
        guard let text = try? String(contentsOfFile: path + ".cpu", encoding: .utf8) else { return (0, 0) }
        let fields = text.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        return ((fields.first ?? 0) / 1e6, fields.count > 1 ? fields[1] : 0)
    }
}

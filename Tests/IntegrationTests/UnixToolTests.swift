import FluxCore
import FluxTesting
import Foundation
import Testing

/// The CLI as a Unix filter: output a reader no longer wants ends the command quietly.
@Suite("zflux as a Unix tool", .serialized, .timeLimit(.minutes(3)))
struct UnixToolTests {
    /// How a command ended with its stdout a pipe nobody reads.
    struct Ending {
        var bySignal: Int32?
        var status: Int32
        var stderr: String
    }

    /// Runs `zflux ARGS` with stdout a pipe whose reader has already gone, so its first write fails
    /// with EPIPE. `meanwhile` runs until the command ends (to make a follower print something).
    static func withReaderGone(_ arguments: [String], meanwhile: () throws -> Void = {}) throws -> Ending {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: zfluxBinary)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        try out.fileHandleForReading.close()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try out.fileHandleForWriting.close()
        let stderr = Locked(Data())
        let reader = DispatchGroup()
        DispatchQueue.global().async(group: reader) {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            stderr.withLock { $0 = data }
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while process.isRunning && ContinuousClock.now < deadline {
            try meanwhile()
            usleep(20_000)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("zflux \(arguments.joined(separator: " ")) kept running with nobody reading its output")
        }
        process.waitUntilExit()
        _ = reader.wait(timeout: .now() + 10)
        let signalled = process.terminationReason == .uncaughtSignal
        return Ending(
            bySignal: signalled ? process.terminationStatus : nil, status: signalled ? 0 : process.terminationStatus,
            stderr: String(decoding: stderr.withLock { $0 }, as: UTF8.self))
    }

    @Test("every command that prints ends as cat does when its reader goes: by SIGPIPE, with nothing on stderr")
    func readerGone() throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        for title in ["one", "two", "three"] {
            #expect(try cluster.zflux(["dispatch", "todo", "addTodo", "{\"title\":\"\(title)\"}"]).status == 0)
        }
        let runDir = ["--run-dir", cluster.runDir]
        let oneShot: [[String]] = [
            ["apps"], ["status"], ["state", "todo"], ["state", "todo", "--at", "2"], ["journal", "dump"],
            ["journal", "tail", "--follow"], ["view", "todo", "--json"], ["view", "todo"],
        ]
        for arguments in oneShot {
            let ending = try Self.withReaderGone(arguments + (arguments == ["apps"] ? [] : runDir))
            #expect(ending.bySignal == SIGPIPE, "zflux \(arguments.joined(separator: " ")): status \(ending.status), \(ending.stderr)")
            #expect(!ending.stderr.contains("Fatal error"), "\(ending.stderr)")
        }
        // Followers end as soon as their reader goes, even when nothing more comes to print.
        for arguments in [["tail", "--json"], ["tail", "--stream"], ["journal", "tail", "--follow", "-n", "0"]] {
            let ending = try Self.withReaderGone(arguments + runDir)
            #expect(ending.bySignal == SIGPIPE, "zflux \(arguments.joined(separator: " ")): status \(ending.status), \(ending.stderr)")
        }
        // And when an action comes, its line is the write that fails.
        for arguments in [["tail", "--json"], ["tail", "--stream"]] {
            let ending = try Self.withReaderGone(arguments + runDir) {
                _ = try cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":1}"#])
            }
            #expect(ending.bySignal == SIGPIPE, "zflux \(arguments.joined(separator: " ")): status \(ending.status), \(ending.stderr)")
            #expect(!ending.stderr.contains("Fatal error"), "\(ending.stderr)")
        }
        // A bench prints its report once, at the end of the run: that write is the one that fails, and
        // the cluster it started for the run is stopped and its directory gone by then.
        let bench = ["bench", "--rate", "200", "--duration", "1", "--warm-up", "0", "--json"]
        let ending = try Self.withReaderGone(bench)
        #expect(ending.bySignal == SIGPIPE, "zflux \(bench.joined(separator: " ")): status \(ending.status), \(ending.stderr)")
        #expect(!ending.stderr.contains("Fatal error"), "\(ending.stderr)")
        let started = try #require(ending.stderr.firstMatch(of: /starting a cluster in (\S+)/), "\(ending.stderr)")
        #expect(!FileManager.default.fileExists(atPath: String(started.output.1)), "the bench's cluster directory is left behind")
    }

    @Test("--version prints zflux's version and the commit the binary was built from (this checkout's)")
    func version() throws {
        let printed = try zflux(["--version"])
        #expect(printed.status == 0)
        let line = printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let match = try #require(line.wholeMatch(of: /(\d+\.\d+\.\d+) \(commit ([0-9a-f]{12})(-modified)?\)/), "\(line)")
        let head = try runProgram("/usr/bin/git", ["-C", ReferenceDocsTests.root.path, "rev-parse", "--short=12", "HEAD"])
        #expect(head.status != 0 || String(match.2) == head.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\(line) against \(head.stdout)")
    }

    @Test("help and usage errors are ArgumentParser's; a command's failure is one line that starts with the binary's name")
    func messages() throws {
        for arguments in [["simulate", "--help"], ["help", "simulate"], ["--help"]] {
            let help = try zflux(arguments)
            #expect(help.status == 0 && help.stdout.contains("USAGE: zflux ") && help.stderr.isEmpty, "\(arguments): \(help.stderr)")
        }
        let negative = try zflux(["dispatch", "counter", "incrementTapped", "--timeout=-1"])
        #expect(negative.status == 64 && negative.stderr.contains("--timeout must be more than 0"), "\(negative.status) \(negative.stderr)")
        let usage = try zflux(["dispatch"])
        #expect(usage.status == 64 && usage.stderr.contains("Missing expected argument"), "\(usage.status) \(usage.stderr)")
        let failed = try zflux(["state", "todo", "--run-dir", "/nonexistent/zflux"])
        #expect(failed.status == 1 && failed.stderr.hasPrefix("zflux: ") && failed.stderr.split(separator: "\n").count == 1, "\(failed.stderr)")
    }

    @Test("dispatch --wait prints the seq once the stores applied it, or their refusal with exit 1")
    func dispatchWaits() throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let added = try cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":5}"#, "--wait"])
        #expect(added.status == 0 && added.stdout == "1\n", "\(added.stdout) \(added.stderr)")
        let reset = try cluster.zflux(["dispatch", "counter", "resetTapped", "--wait"])
        #expect(reset.status == 0 && reset.stdout == "2\n", "\(reset.stdout) \(reset.stderr)")
        // Nothing to reset: seq 3 changes nothing, and the store says so by a heartbeat current through 3.
        let unchanged = try cluster.zflux(["dispatch", "counter", "resetTapped", "--wait"])
        #expect(unchanged.status == 0 && unchanged.stdout == "3\n", "\(unchanged.stdout) \(unchanged.stderr)")
        let state = try cluster.zflux(["state", "counter"])
        #expect(state.stdout.hasPrefix("{\"version\":3,"), "the version `state` reports: \(state.stdout)")
        // Sequenced and acknowledged, then refused by the todo store's reducer.
        let refused = try cluster.zflux(["dispatch", "todo", "removeTodo", #"{"index":9}"#, "--wait"])
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.hasPrefix("zflux: store todo refused seq 4: "), "\(refused.stderr)")
        // Without --wait the refusal is the stores' business: the seq is printed and the exit is 0.
        let unwaited = try cluster.zflux(["dispatch", "todo", "removeTodo", #"{"index":9}"#])
        #expect(unwaited.status == 0 && unwaited.stdout == "5\n", "\(unwaited.stdout) \(unwaited.stderr)")
        let alone = try cluster.zflux(["dispatch", "counter", "incrementTapped", "--wait", "--repeat", "2"])
        #expect(alone.status != 0 && alone.stderr.contains("--wait waits for one action"), "\(alone.stderr)")
    }
}

import Examples
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("zflux journal commands", .serialized, .timeLimit(.minutes(2)))
struct JournalCommandTests {
    @Test("dump, tail and time travel read what the cluster journaled")
    func commands() async throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let titles = ["one", "two", "three", "four"]
        for title in titles { _ = try cluster.zflux(["dispatch", "todo", "addTodo", "{\"title\":\"\(title)\"}"]) }
        #expect(try cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":7}"#]).stdout == "5\n")

        struct Line: Decodable { var seq: UInt64; var app: String; var type: String; var payload: [String: [String: String]]? }
        let dump = try cluster.zflux(["journal", "dump", "--from", "2", "--to", "3"])
        let lines = dump.stdout.split(separator: "\n").compactMap { try? JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
        #expect(lines.map(\.seq) == [2, 3])
        #expect(lines.first?.payload?["addTodo"]?["title"] == "two")

        let tail = try cluster.zflux(["journal", "tail", "-n", "1"])
        #expect(tail.stdout.contains("\"seq\":5") && tail.stdout.contains("\"app\":\"counter\""))

        struct Replayed: Decodable { var version: UInt64; var state: Todo.State }
        let past = try JSONDecoder().decode(
            Replayed.self, from: Data(try cluster.zflux(["journal", "replay", "--store", "todo", "--to", "2"]).stdout.utf8))
        #expect(past.version == 2)
        #expect(past.state.todos.map(\.title) == ["two", "one"], "as of seq 2: the newest todo on top")
        let now = try JSONDecoder().decode(Replayed.self, from: Data(try cluster.zflux(["journal", "replay", "--store", "todo"]).stdout.utf8))
        #expect(now.state == (try await waitForState(cluster, "todo", version: 5, as: Todo.State.self)), "replaying everything gives the live state")
        #expect(try cluster.zflux(["journal", "verify"]).stdout.contains("ok"))
    }

    @Test("journal compact removes what every store's snapshot covers, refuses what one still needs, and the cluster starts again from it")
    func compact() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("compact-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/cluster.toml"
        try "[cluster]\ntransport = \"ipc\"\n[journal]\nsegment_mb = 1\n[[store]]\nname = \"ledger\"\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let run = dir + "/run"
        let memo = String(repeating: "j", count: 8_000)
        do {
            let cluster = try ClusterProcess(transport: "ipc", runDir: run, extraArguments: ["--config", config])
            defer { cluster.stop(keepRunDirectory: true) }
            try cluster.waitUntilReady()
            let filled = try cluster.zflux(
                ["dispatch", "ledger", "post", #"{"account":1,"amount":1,"memo":"\#(memo)"}"#, "--repeat", "400"], timeout: .seconds(120))
            try #require(filled.status == 0, "\(filled.stderr)")
            // The running dispatcher holds the journal: compaction waits for it to stop.
            let busy = try zflux(["journal", "compact", "--run-dir", run, "--config", config])
            #expect(busy.status != 0 && busy.stderr.contains("stop it before compacting"), "\(busy.stderr)")
        }
        // Stopped, the store wrote its snapshot at 400. Without it, nothing may go.
        let snapshot = run + "/snapshots/ledger.snapshot"
        try FileManager.default.moveItem(atPath: snapshot, toPath: snapshot + ".away")
        let refused = try zflux(["journal", "compact", "--run-dir", run, "--config", config])
        #expect(refused.status != 0 && refused.stderr.contains("no snapshot of ledger"), "\(refused.stderr)")
        try FileManager.default.moveItem(atPath: snapshot + ".away", toPath: snapshot)
        let planned = try zflux(["journal", "compact", "--run-dir", run, "--config", config, "--dry-run"])
        #expect(planned.status == 0 && planned.stdout.contains("would remove"), "\(planned.stdout)\(planned.stderr)")
        let done = try zflux(["journal", "compact", "--run-dir", run, "--config", config])
        #expect(done.status == 0 && done.stdout.contains("removed"), "\(done.stdout)\(done.stderr)")
        let verified = try zflux(["journal", "verify", "--run-dir", run, "--config", config])
        #expect(verified.status == 0 && !verified.stdout.contains("seqs 1…") && verified.stdout.contains("…400"), "\(verified.stdout)")
        // The cluster starts again on the compacted journal: the store from its snapshot, and it goes on.
        let again = try ClusterProcess(transport: "ipc", runDir: run, extraArguments: ["--config", config])
        defer { again.stop(keepRunDirectory: true) }
        try again.waitUntilReady()
        #expect(try again.zflux(["dispatch", "ledger", "post", #"{"account":2,"amount":5,"memo":"after"}"#]).stdout == "401\n")
        try await eventually("the store applies it") { try again.zflux(["state", "ledger"]).stdout.hasPrefix(#"{"version":401,"#) }
    }
}

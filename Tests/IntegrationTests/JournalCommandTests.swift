import Devtools
import Dispatcher
import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("zflux journal commands", .serialized, .timeLimit(.minutes(2)))
struct JournalCommandTests {
    @Test("in a dispatcher pair's run directory, the journal commands name the members' journals instead of reading the empty top one")
    func pairRunDirectory() throws {
        var template = Array("/tmp/zf-pairjournal-XXXXXX".utf8CString)
        let run = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: run) }
        for member in ["d1", "d2"] {
            try FileManager.default.createDirectory(atPath: "\(run)/journal/\(member)", withIntermediateDirectories: true)
            let journal = try Journal(directory: "\(run)/journal/\(member)")
            try journal.append(
                (1...3).map { seq in
                    Message(
                        topic: Array("counter".utf8), header: Header(kind: .action, seq: seq, clientID: 7, clientSeq: seq, actionType: "resetTapped"),
                        payload: [])
                })
            try journal.commit()
        }
        // The pair's cluster.json, as `cluster up` writes it: time travel reads the journal it names.
        let config = """
            [cluster]
            transport = "ipc"
            [ha]
            etcd = ["http://127.0.0.1:2379"]
            [[dispatcher]]
            name = "d1"
            [[dispatcher]]
            name = "d2"
            [[store]]
            name = "counter"
            """
        try config.write(toFile: run + "/pair.toml", atomically: true, encoding: .utf8)
        let checked = try zflux(["cluster", "check", run + "/pair.toml", "--run-dir", run])
        try #require(checked.status == 0, "\(checked)")
        #expect(FileManager.default.createFile(atPath: run + "/cluster.json", contents: Data(checked.stdout.utf8)))
        let session = run + "/session.json"
        for command in [
            ["journal", "verify"], ["journal", "dump"], ["journal", "replay", "--store", "counter"], ["journal", "compact", "--dry-run"],
            ["journal", "export", "-o", session], ["state", "counter", "--at", "2"],
        ] {
            let refused = try zflux(command + ["--run-dir", run])
            #expect(refused.status == 1 && refused.stderr.contains("one per member of a dispatcher pair (d1, d2)"), "\(command): \(refused)")
            #expect(refused.stderr.contains("--journal \(run)/journal/d1"), "\(command): \(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: session), "a refused export writes nothing")
        // A single dispatcher started here by mistake leaves an empty segment at the top: still no journal
        // of its own, so still refused (it said "0 records… ok").
        #expect(FileManager.default.createFile(atPath: "\(run)/journal/00000000000000000001.journal", contents: Data()))
        let stray = try zflux(["journal", "verify", "--run-dir", run])
        #expect(stray.status == 1 && stray.stderr.contains("one per member of a dispatcher pair (d1, d2)"), "\(stray)")
        let member = try zflux(["journal", "verify", "--journal", "\(run)/journal/d1"])
        #expect(member.status == 0 && member.stdout.contains("3 records"), "\(member)")
        let past = try zflux(["state", "counter", "--at", "2", "--journal", "\(run)/journal/d1", "--run-dir", run])
        #expect(past.status == 0 && past.stdout == #"{"version":2,"state":{"count":0}}"# + "\n", "\(past)")
    }

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

    @Test("time travel: state --at a seq; a session exported and imported reproduces every store's state; its reducers check out")
    func timeTravelAndSessions() async throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        for title in ["one", "two", "three"] { _ = try cluster.zflux(["dispatch", "todo", "addTodo", "{\"title\":\"\(title)\"}"]) }
        _ = try cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":7}"#])
        _ = try cluster.zflux(["dispatch", "todo", "toggleTodo", #"{"index":1}"#])
        _ = try cluster.zflux(["dispatch", "todo", "removeTodo", #"{"index":9}"#])  // sequenced, then rejected by the store
        _ = try cluster.zflux(["dispatch", "login", "usernameChanged", #"{"username":"ada@example.com"}"#])
        let head: UInt64 = 7
        _ = try await waitForState(cluster, "todo", version: head, as: Todo.State.self)

        struct Past: Decodable { var version: UInt64; var state: Todo.State }
        let past = try cluster.zflux(["state", "todo", "--at", "2"])
        let decoded = try JSONDecoder().decode(Past.self, from: Data(past.stdout.utf8))
        #expect(decoded.version == 2 && decoded.state.todos.map(\.title) == ["two", "one"], "\(past.stdout)")
        let beyond = try cluster.zflux(["state", "todo", "--at", "99"])
        #expect(beyond.status != 0 && beyond.stderr.contains("seq 99 is beyond the journal's head (7)"), "\(beyond.stderr)")
        let unknown = try cluster.zflux(["state", "nope", "--at", "1"])
        #expect(unknown.status != 0 && unknown.stderr.contains("the cluster has no store 'nope'"), "\(unknown.stderr)")

        // A session of seqs 3…7: the states before 3 and every action after.
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("session-\(getpid())").path
        try? FileManager.default.removeItem(atPath: work)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = work + "/bug.session"
        let exported = try cluster.zflux(["journal", "export", "--from", "3", "--to", "\(head)", "-o", file])
        try #require(exported.status == 0, "\(exported.stderr)")
        let session = try Session.load(file)
        #expect(session.actions.map(\.seq) == [3, 4, 5, 6, 7] && session.anchor?.seq == 2)
        #expect(session.stores.first { $0.name == "todo" }?.version == 2)
        #expect(session.actions[3].changed.isEmpty, "the rejected removeTodo changed nothing")
        #expect(Set(session.actions[0].changed.keys) == ["todo", "stats"], "an added todo changes todo and the stats that read it")

        // Today's reducers reproduce it; a recording that says otherwise is caught at its seq.
        #expect(try session.verify(apps: Catalog.apps) == [])
        var tampered = session
        tampered.actions[1].changed["counter"] = .object(["count": .number(8)])
        let mismatches = try tampered.verify(apps: Catalog.apps)
        #expect(mismatches.map(\.seq) == [4] && mismatches.first?.store == "counter", "\(mismatches)")

        // Imported into a new run directory, a cluster started there holds the same states.
        let copy = work + "/copy"
        let imported = try zflux(["journal", "import", file, "--run-dir", copy])
        try #require(imported.status == 0, "\(imported.stderr)")
        let again = try zflux(["journal", "import", file, "--run-dir", copy])
        #expect(again.status != 0 && again.stderr.contains("is not empty"), "an import never writes over a run directory")
        let replayed = try ClusterProcess(transport: "ipc", runDir: copy, extraArguments: ["--config", copy + "/cluster.toml"])
        defer { replayed.stop() }
        try replayed.waitUntilReady()
        _ = try await waitForState(replayed, "todo", version: head, as: Todo.State.self)
        for store in try #require(cluster.topology).stores.map(\.name) {
            let original = try cluster.zflux(["state", store]).stdout
            try await eventually("store \(store) of the imported cluster at version \(head)", timeout: .seconds(60)) {
                try replayed.zflux(["state", store]).stdout == original
            }
        }
    }

    @Test(
        "journal compact removes what every store's snapshot covers, refuses what one still needs, finds a stopped cluster's stores, and the cluster starts again from it"
    )
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
        // Without --config too: the stopped cluster's stores are its last run's (cluster.last.json).
        let planned = try zflux(["journal", "compact", "--run-dir", run, "--dry-run"])
        #expect(planned.status == 0 && planned.stdout.contains("would remove"), "\(planned.stdout)\(planned.stderr)")
        let travelled = try zflux(["state", "ledger", "--at", "1", "--run-dir", run])
        #expect(travelled.status == 0 && travelled.stdout.hasPrefix(#"{"version":1,"#), "time travel on a stopped cluster: \(travelled)")
        // Commands that talk to a cluster still say none runs.
        let sent = try zflux(["dispatch", "ledger", "post", #"{"account":1,"amount":1}"#, "--run-dir", run])
        #expect(sent.status != 0 && sent.stderr.contains("no cluster in"), "\(sent)")
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

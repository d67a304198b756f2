import Devtools
import Dispatcher
import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Testing
import ZeroMQ

/// What a release wrote, kept under `Fixtures/VERSION/` (docs/UPGRADING.md, "Golden fixtures"): the run
/// directory of a stopped cluster (its journal, with schedules fired, cancelled and pending, a
/// quarantined action and a DISPATCH-BATCH's actions, and its stores' snapshots), a session file
/// exported from it, and `expected.json`, what the live cluster said before it stopped.
enum GoldenFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

    struct StoreState: Codable, Equatable {
        var version: UInt64
        var state: JSONValue
    }

    struct Schedule: Codable, Equatable {
        var app: String
        var actionType: String
        var id: String
        var requestSeq: UInt64
        var dueNanoseconds: Int64
    }

    /// `zflux schedules --json`, live or read from the journal.
    struct Listing: Codable {
        var pending: Int
        var fired: UInt64
        var cancelled: UInt64
        var schedules: [Schedule]
    }

    struct Expected: Codable {
        /// `zflux --version` of the binary that wrote them.
        var writtenBy: String
        /// The run directory the cluster ran in: `cluster.last.json` names it, and a reader moves it.
        var runDirectory: String
        var head: UInt64
        var stores: [String: StoreState]
        /// The seqs the one DISPATCH-BATCH's four `counter.addTapped(amount: 5)` were given.
        var batchSeqs: [UInt64]
        var quarantined: [Quarantine]
        var schedules: [Schedule]
        var fired: UInt64
        var cancelled: UInt64
        /// The seq of the action the first schedule fired.
        var firedSeq: UInt64
        /// The session file covers `sessionFrom…head` (after the quarantined action, which would
        /// trap the reducers `Session.verify` runs).
        var sessionFrom: UInt64
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String, snakeCase: Bool = true) throws -> T {
        let decoder = JSONDecoder()
        if snakeCase { decoder.keyDecodingStrategy = .convertFromSnakeCase }
        return try decoder.decode(type, from: Data(text.utf8))
    }

    static func run(_ arguments: [String]) throws -> String {
        let result = try zflux(arguments, timeout: .seconds(60))
        try #require(result.status == 0, "zflux \(arguments.joined(separator: " ")): \(result.stderr)")
        return result.stdout
    }
}

/// Writes this release's fixtures: `ZFLUX_WRITE_FIXTURES=1 swift test --skip-build --filter
/// GoldenFixtureWriter`. Only for a new release's directory: rewriting an older one is a format change
/// (docs/UPGRADING.md, "Golden fixtures").
@Suite(
    "Golden fixtures: the writer", .serialized, .timeLimit(.minutes(10)),
    .enabled(if: ProcessInfo.processInfo.environment["ZFLUX_WRITE_FIXTURES"] == "1"))
struct GoldenFixtureWriter {
    @Test("a real cluster writes this release's journal, snapshots and session into Fixtures/VERSION")
    func write() async throws {
        let version = try GoldenFixtures.run(["--version"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let release = try #require(version.split(separator: " ").first.map(String.init))
        let config = NSTemporaryDirectory() + "zflux-fixture-\(UUID().uuidString.prefix(8)).toml"
        try """
        [cluster]
        transport = "ipc"
        [journal]
        fsync = "always"
        [restart]
        max_restarts = 10
        window_s = 60
        [[store]]
        name = "counter"
        [[store]]
        name = "drill"
        [[store]]
        name = "login"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--config", config])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let topology = try #require(cluster.topology)
        func run(_ arguments: [String]) throws -> String {
            let result = try cluster.zflux(arguments, timeout: .seconds(60))
            try #require(result.status == 0, "zflux \(arguments.joined(separator: " ")): \(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func listing() throws -> GoldenFixtures.Listing { try GoldenFixtures.decode(GoldenFixtures.Listing.self, try run(["schedules", "--json"])) }

        for _ in 1...3 { _ = try run(["dispatch", "counter", "incrementTapped"]) }
        // One DISPATCH-BATCH of four actions, acknowledged as one ACK-BATCH.
        let payload = try JSONPayloadCodec().encode(Counter.Action.addTapped(amount: 5))
        let batchSeqs = try await onThread { () throws -> [UInt64] in
            let client = try SocketDefaults.dealer(.shared)
            defer { client.close() }
            try client.connect(topology.dispatcher.intake)
            let dispatches = (1...4).map { clientSeq in
                Message(
                    topic: "counter", header: Header(kind: .dispatch, clientID: 4242, clientSeq: UInt64(clientSeq), actionType: "addTapped"),
                    payload: payload)
            }
            _ = try client.send(DispatchBatch.message(dispatches).frames)
            var seqs: [UInt64] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while seqs.count < 4 && ContinuousClock.now < deadline {
                var poller = Poller()
                poller.add(.socket(client))
                guard try poller.poll(timeoutMilliseconds: 100) > 0 else { continue }
                while let frames = try client.receive(dontWait: true) {
                    seqs += try AckBatch.unpack(try Message(frames: frames)).filter { $0.kind == .ack }.map(\.header.seq)
                }
            }
            return seqs
        }
        try #require(batchSeqs.count == 4, "the batch's four ACKs: \(batchSeqs)")
        _ = try run(["dispatch", "drill", "tick"])

        // A schedule that fires (a minute after the sign-in), one cancelled by a logout, one pending.
        func signIn(username: Bool) async throws -> UInt64 {
            if username { _ = try run(["dispatch", "login", "usernameChanged", #"{"username":"ada@example.com"}"#]) }
            _ = try run(["dispatch", "login", "passwordChanged", #"{"password":"secret1"}"#])
            let tapped = try #require(UInt64(try run(["dispatch", "login", "loginTapped"])))
            var request: UInt64 = 0
            try await eventually("the session's end is scheduled", timeout: .seconds(60), interval: .milliseconds(200)) {
                request = try listing().schedules.first { $0.requestSeq > tapped }?.requestSeq ?? 0
                return request > 0
            }
            return request
        }
        let firstRequest = try await signIn(username: true)
        let poison = try #require(UInt64(try run(["dispatch", "drill", "crash", #"{"note":"poison"}"#])))
        try await eventually("the dispatcher to quarantine seq \(poison)", timeout: .seconds(90), interval: .milliseconds(200)) {
            (try? GoldenFixtures.decode([Quarantine].self, try run(["quarantine", "list", "--json"])))?.map(\.seq) == [poison]
        }
        _ = try run(["dispatch", "drill", "tick"])
        try await eventually("the first schedule to fire", timeout: .seconds(180), interval: .milliseconds(500)) { try listing().fired == 1 }
        _ = try await signIn(username: false)
        _ = try run(["dispatch", "login", "logoutTapped"])
        try await eventually("the logout to cancel the second", timeout: .seconds(60), interval: .milliseconds(200)) { try listing().cancelled == 1 }
        _ = try await signIn(username: true)
        let head = try #require(UInt64(try run(["dispatch", "counter", "incrementTapped"])))

        // What the live cluster says, once every store has applied the head.
        var stores: [String: GoldenFixtures.StoreState] = [:]
        try await eventually("every store to apply seq \(head)", timeout: .seconds(60), interval: .milliseconds(200)) {
            for name in ["counter", "drill", "login"] {
                stores[name] = try GoldenFixtures.decode(GoldenFixtures.StoreState.self, try run(["state", name]), snakeCase: false)
            }
            return stores.values.allSatisfy { $0.version == head }
        }
        let listed = try listing()
        try #require(listed.pending == 1 && listed.fired == 1 && listed.cancelled == 1, "\(listed)")
        let dump = try run(["journal", "dump"]).split(separator: "\n")
        let fired = try #require(dump.first { $0.contains("\"scheduled\"") && $0.contains("sessionExpired") })
        let firedSeq = try GoldenFixtures.decode(ScheduleProcessTests.Line.self, String(fired)).seq
        #expect(dump.contains { $0.contains("\"seq\":\(firstRequest),") })
        let quarantined = try GoldenFixtures.decode([Quarantine].self, try run(["quarantine", "list", "--json"]))
        let expected = GoldenFixtures.Expected(
            writtenBy: version, runDirectory: cluster.runDir, head: head, stores: stores, batchSeqs: batchSeqs, quarantined: quarantined,
            schedules: listed.schedules, fired: listed.fired, cancelled: listed.cancelled, firedSeq: firedSeq, sessionFrom: poison + 1)

        let target = GoldenFixtures.directory + "/" + release
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.createDirectory(atPath: target + "/run", withIntermediateDirectories: true)
        _ = try run(["journal", "export", "--from", "\(poison + 1)", "--output", target + "/cluster.session"])
        cluster.stop(keepRunDirectory: true)
        defer { try? FileManager.default.removeItem(atPath: cluster.runDir) }
        // The formats alone: no logs, pids, sockets, the journal's lock or the nodes' credential.
        let files = FileManager.default
        for directory in ["journal", "snapshots"] {
            try files.createDirectory(atPath: target + "/run/" + directory, withIntermediateDirectories: true)
            for file in try files.contentsOfDirectory(atPath: cluster.runDir + "/" + directory) where file != "LOCK" {
                try files.copyItem(atPath: cluster.runDir + "/" + directory + "/" + file, toPath: target + "/run/" + directory + "/" + file)
            }
        }
        try files.copyItem(atPath: cluster.runDir + "/" + Topology.lastRunFileName, toPath: target + "/run/" + Topology.lastRunFileName)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(expected).write(to: URL(fileURLWithPath: target + "/expected.json"))
    }
}

@Suite("Golden fixtures: every release's files, read by this one", .timeLimit(.minutes(5)))
struct GoldenFixtureTests {
    static var releases: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: GoldenFixtures.directory)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test("there are fixtures, one directory a release")
    func present() {
        #expect(Self.releases.contains("0.2.0"), "\(GoldenFixtures.directory): \(Self.releases)")
    }

    @Test(
        "a release's journal, snapshots and session are read by this binary and hold what its live cluster said: every seq, the batch, the quarantine, the schedule book (fired, cancelled, pending), each store's state and version",
        arguments: releases)
    func reads(release: String) async throws {
        let source = GoldenFixtures.directory + "/" + release
        let expected = try JSONDecoder().decode(GoldenFixtures.Expected.self, from: Data(contentsOf: URL(fileURLWithPath: source + "/expected.json")))
        // A copy, moved to a run directory of its own: reading must change nothing committed.
        var template = Array("/tmp/zf-gold-XXXXXX".utf8CString)
        let run = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: run) }
        try FileManager.default.removeItem(atPath: run)
        try FileManager.default.copyItem(atPath: source + "/run", toPath: run)
        let topology = run + "/" + Topology.lastRunFileName
        try String(contentsOfFile: topology, encoding: .utf8).replacingOccurrences(of: expected.runDirectory, with: run)
            .write(toFile: topology, atomically: true, encoding: .utf8)

        // The journal: every record checks, every seq once, in order.
        #expect(try GoldenFixtures.run(["journal", "verify", "--journal", run + "/journal"]).contains("seqs 1…\(expected.head)"))
        let lines = try GoldenFixtures.run(["journal", "dump", "--journal", run + "/journal"]).split(separator: "\n").map { String($0) }
        let records = try lines.map { try GoldenFixtures.decode(ScheduleProcessTests.Line.self, $0) }
        #expect(records.map(\.seq) == Array(1...expected.head))
        for seq in expected.batchSeqs {
            #expect(records[Int(seq) - 1].app == "counter" && records[Int(seq) - 1].type == "addTapped", "seq \(seq): \(lines[Int(seq) - 1])")
        }
        let scheduled = records.filter { $0.scheduled != nil }
        #expect(scheduled.map(\.seq) == [expected.firedSeq] && scheduled.first?.type == "sessionExpired", "\(scheduled.map(\.seq))")
        #expect(records.filter { $0.app == "zflux.schedule" }.count == 4, "three requests and a cancel")

        // The quarantine, as the dispatcher reads it and as the dump marks it.
        let journal = try Journal(directory: run + "/journal", repair: false)
        #expect(journal.lastSeq == expected.head)
        #expect(try journal.quarantine() == expected.quarantined)
        let poison = try #require(expected.quarantined.first)
        #expect(expected.quarantined.count == 1 && poison.app == "drill" && poison.actionType == "crash")
        #expect(lines[Int(poison.seq) - 1].contains("\"quarantined\""))

        // The schedule book the journal rebuilds, and each store's state from its snapshot.
        let listing = try GoldenFixtures.decode(GoldenFixtures.Listing.self, try GoldenFixtures.run(["schedules", "--json", "--run-dir", run]))
        #expect(listing.schedules == expected.schedules && listing.pending == 1)
        #expect(listing.fired == expected.fired && listing.cancelled == expected.cancelled && expected.fired == 1 && expected.cancelled == 1)
        #expect(expected.schedules.first.map { ($0.app, $0.actionType) } ?? ("", "") == ("login", "sessionExpired"))
        for (name, state) in expected.stores.sorted(by: { $0.key < $1.key }) {
            let read = try GoldenFixtures.decode(
                GoldenFixtures.StoreState.self, try GoldenFixtures.run(["state", name, "--run-dir", run]), snakeCase: false)
            #expect(read == state, "\(name)")
            // ZFSNAP02, then the version it holds (u64, little-endian).
            let snapshot = try [UInt8](Data(contentsOf: URL(fileURLWithPath: run + "/snapshots/\(name).snapshot")))
            #expect(snapshot.count > 16 && Array(snapshot[0..<8]) == Array("ZFSNAP02".utf8), "\(name)'s snapshot")
            #expect(snapshot.count > 16 && snapshot[8..<16].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } == expected.head)
        }
        #expect(expected.stores["counter"]?.state == .object(["count": .number(3 + 20 + 1)]))

        // The session: today's reducers reproduce every state it recorded.
        let session = try Session.load(source + "/cluster.session")
        #expect(session.from == expected.sessionFrom && session.to == expected.head)
        #expect(Set(session.stores.map(\.name)) == ["counter", "drill", "login"])
        #expect(try session.verify(apps: Catalog.apps) == [])
    }
}

import Cluster
import Devtools
import Examples
import FluxCore
import Foundation
import Testing

/// `journal import` takes a file from someone else: everything in it is checked before anything is
/// written, and nothing is written outside the new run directory (hardening round 3).
@Suite("Session import")
struct SessionImportTests {
    let apps: [any AnyApp] = Catalog.apps

    /// A session of two todo actions, seqs 1…2, as `journal export` writes one.
    func session() throws -> Session {
        let app = Todo.app(environment: .mock())
        let actions = try ["one", "two"].enumerated().map { index, title in
            let payload = try app.wirePayload(type: "addTodo", argumentsJSON: Array("{\"title\":\"\(title)\"}".utf8))
            let message = Message(
                topic: "todo",
                header: Header(kind: .action, seq: UInt64(index + 1), clientID: 7, clientSeq: UInt64(index + 1), actionType: "addTodo"),
                payload: payload)
            return Session.Action(message, payload: .null, changed: [:])
        }
        let store = Session.Store(name: "todo", app: "todo", version: 0, snapshot: Data(), state: .null)
        return Session(from: 1, to: 2, codec: .binary, stores: [store], anchor: nil, actions: actions)
    }

    /// A fresh directory to import beside, removed afterwards.
    func scratch() throws -> String {
        var template = Array("/tmp/zf-import-XXXXXX".utf8CString)
        return String(cString: try #require(mkdtemp(&template)))
    }

    @Test("a good session becomes a run directory whose cluster.toml the cluster reads")
    func good() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try session().materialize(runDirectory: dir + "/run", apps: apps)
        let config = try ClusterConfig.load(path: dir + "/run/cluster.toml")
        #expect(config.stores?.map(\.name) == ["todo"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["run"], "no staging directory is left")
    }

    @Test(
        "a hostile session is refused, naming the field, and nothing is written",
        arguments: [
            "store name ../../victim/pwned", "store name with a newline", "duplicate store", "20 MiB payload", "type 'add Todo!'",
            "300-character type", "to = 2^64-1", "anchor.seq = 2^64-1", "an action the app refuses", "seq out of order",
        ])
    func hostile(_ case: String) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var bad = try session()
        let field: String
        switch `case` {
        case "store name ../../victim/pwned":
            bad.stores[0].name = "../../\(URL(fileURLWithPath: dir).lastPathComponent)-victim/pwned"
            field = "stores[0].name"
        case "store name with a newline":
            bad.stores[0].name = "todo\"\nmetrics_port = 19999\n"
            field = "stores[0].name"
        case "duplicate store":
            bad.stores.append(bad.stores[0])
            field = "appears twice"
        case "20 MiB payload":
            bad.actions[1].wire = Data(count: 20 << 20)
            field = "actions[1] has a payload of 20971520 bytes"
        case "type 'add Todo!'":
            bad.actions[0].type = "add Todo!"
            field = "actions[0].type"
        case "300-character type":
            bad.actions[0].type = String(repeating: "a", count: 300)
            field = "actions[0].type"
        case "to = 2^64-1":
            bad.to = .max
            field = "to 18446744073709551615"
        case "anchor.seq = 2^64-1":
            bad.from = 2
            bad.to = 3
            bad.actions[0].seq = 2
            bad.actions[1].seq = 3
            var anchor = bad.actions[0]
            anchor.seq = .max
            bad.anchor = anchor
            field = "anchor.seq"
        case "an action the app refuses":
            bad.actions[1].wire = Data([0xFF, 0x00, 0x13])
            field = "actions[1] (todo.addTodo) is refused by its app"
        default:
            bad.actions.swapAt(0, 1)
            field = "actions[0].seq"
        }
        #expect {
            try bad.materialize(runDirectory: dir + "/run", apps: apps)
        } throws: { error in
            "\(error)".contains(field)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty, "nothing was written")
        #expect(!FileManager.default.fileExists(atPath: dir + "-victim"), "nothing was written outside")
    }

    @Test(
        "a session file with hostile numbers is refused when read, before any check could trap",
        arguments: ["to = 2^64-1", "to = 4e9", "anchor.seq = 2^64-1", "no actions"])
    func hostileFile(_ case: String) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var bad = try session()
        switch `case` {
        case "to = 2^64-1": bad.to = .max
        case "to = 4e9": bad.to = 4_000_000_000
        case "anchor.seq = 2^64-1":
            var anchor = bad.actions[0]
            anchor.seq = .max
            bad.anchor = anchor
        default: bad.actions = []
        }
        // `journal import` reads the file first (Session.load), then checks it: the read must not trap.
        let path = dir + "/bad.session"
        try bad.encoded().write(to: URL(fileURLWithPath: path))
        #expect {
            try Session.load(path)
        } throws: { error in
            "\(error)".contains("does not hold the actions")
        }
    }
}

@Suite("Session files with scheduled actions")
struct ScheduledSessionTests {
    @Test("a session keeps a schedule request and a fired action's due time, and its journal is the recorded one")
    func scheduled() throws {
        let login = Login.app(environment: .mock(.success("Ada")))
        let expired = try login.wirePayload(type: "sessionExpired", argumentsJSON: [])
        let request = try WireCodec().encode(
            ScheduleRequest(id: "session", app: "login", type: "sessionExpired", payload: expired, afterNanoseconds: 60_000_000_000))
        let due: Int64 = 1_800_000_060_000_000_000
        let messages = [
            Message(
                topic: Schedules.topic,
                header: Header(kind: .action, seq: 1, clientID: 7, clientSeq: 1, timestamp: 1_800_000_000_000_000_000, actionType: "schedule"),
                payload: request),
            Message(
                topic: "login",
                header: Header(
                    kind: .action, flags: .scheduled, seq: 2, ref: UInt64(bitPattern: due), clientSeq: 1, timestamp: due + 5_000_000_000,
                    actionType: "sessionExpired"),
                payload: expired),
        ]
        let store = Session.Store(name: "login", app: "login", version: 0, snapshot: Data(), state: .null)
        let session = Session(
            from: 1, to: 2, codec: .binary, stores: [store], anchor: nil, actions: messages.map { Session.Action($0, payload: .null, changed: [:]) })
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("scheduled-\(getpid()).session").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try JSONEncoder().encode(session).write(to: URL(fileURLWithPath: file))
        let read = try Session.load(file)
        try read.validate(apps: [login])
        let again = read.actions.map { $0.message(history: 0) }
        #expect(again.map(\.header.flags) == [[], .scheduled], "the fired action keeps its flag")
        #expect(again.map(\.header.ref) == [0, UInt64(bitPattern: due)], "and its due time")
        #expect(Stamp(again[1].header).lateness == .seconds(5))
        #expect(again[0].topicString == Schedules.topic && again[0].payload == request)
    }
}

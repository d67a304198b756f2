import Devtools
import Dispatcher
import ExampleViews
import Examples
import FluxCore
import Foundation
import NodeSupport
import StoreNode
import Testing
import ViewNode

@Suite("Time travel over a real journal")
struct TimeTravelTests {
    /// A journal in a fresh directory holding `actions` (app, type, arguments JSON) as seqs 1….
    func journal(_ actions: [(String, String, String)], segmentBytes: Int = 64 << 20) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("timetravel-\(UUID().uuidString)").path
        let journal = try Journal(directory: dir, policy: .none, segmentBytes: segmentBytes)
        var messages: [Message] = []
        for (index, (app, type, arguments)) in actions.enumerated() {
            let payload = try #require(Catalog.app(named: app)).wirePayload(type: type, argumentsJSON: Array(arguments.utf8))
            messages.append(
                Message(
                    topic: app,
                    header: Header(
                        kind: .action, seq: UInt64(index + 1), clientID: 7, clientSeq: UInt64(index + 1),
                        timestamp: 1_800_000_000_000_000_000 + Int64(index), actionType: type, history: journal.history.rawValue),
                    payload: payload))
        }
        try journal.append(messages)
        try journal.commit()
        return dir
    }

    let todos: [(String, String, String)] = [
        ("todo", "addTodo", #"{"title":"one"}"#), ("counter", "incrementTapped", "{}"), ("todo", "addTodo", #"{"title":"two"}"#),
        ("todo", "toggleTodo", #"{"index":1}"#), ("todo", "removeTodo", #"{"index":9}"#), ("todo", "addTodo", #"{"title":"three"}"#),
    ]

    func todoState(_ replica: Rewind.Replica) throws -> Todo.State {
        try JSONDecoder().decode(Todo.State.self, from: Data(try replica.stateJSON()))
    }

    @Test("a store's state as of any seq, from the journal; beyond the head is an error")
    func statesAtSeqs() throws {
        let dir = try journal(todos)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rewind = try Rewind(journalDirectory: dir, snapshotDirectory: nil)
        let todo = Rewind.StoreSpec(name: "todo", app: Todo.app())
        #expect(try todoState(try #require(try rewind.replicas([todo], at: 0).first)).todos.isEmpty)
        let atFour = try todoState(try #require(try rewind.replicas([todo], at: 4).first))
        #expect(atFour.todos.map(\.title) == ["two", "one"] && atFour.todos.map(\.done) == [false, true])
        #expect(try todoState(try #require(try rewind.replicas([todo], at: 6).first)).todos.map(\.title) == ["three", "two", "one"])
        #expect(throws: RewindError.self) { try rewind.replicas([todo], at: 7) }
    }

    @Test("a snapshot at or below the seq is the starting point; a journal compacted past the seq without one is a clear error")
    func snapshotsAndCompaction() throws {
        let dir = try journal(todos)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let snapshots = dir + "-snapshots"
        defer { try? FileManager.default.removeItem(atPath: snapshots) }
        // A snapshot that says "four todos" at seq 3: the rebuilt state must start from it, not from seq 1.
        var marked = Todo.State()
        marked.todos = (1...4).map { Todo.Item(title: "from the snapshot \($0)") }
        let encoded = try WireCodec(.binary).encode(marked)
        let history = try Journal(directory: dir, repair: false).history.rawValue
        try SnapshotFile.write(.init(version: 3, history: history, app: "todo", state: encoded), to: snapshots + "/todo.snapshot")
        let rewind = try Rewind(journalDirectory: dir, snapshotDirectory: snapshots)
        let todo = Rewind.StoreSpec(name: "todo", app: Todo.app())
        #expect(try todoState(try #require(try rewind.replicas([todo], at: 6).first)).todos.count == 5)
        #expect(try todoState(try #require(try rewind.replicas([todo], at: 2).first)).todos.map(\.title) == ["one"], "below the snapshot: from seq 1")

        // A journal that starts at seq 4 (compacted, or imported) and no snapshot: seq 5 is unknown.
        let later = dir + "-later"
        defer { try? FileManager.default.removeItem(atPath: later) }
        try Journal.create(
            directory: later, history: HistoryID(rawValue: history), records: try Journal(directory: dir, repair: false).read(from: 4, limit: 10))
        let compacted = try Rewind(journalDirectory: later, snapshotDirectory: nil)
        #expect(compacted.journal.firstSeq == 4 && compacted.head == 6)
        #expect {
            try compacted.replicas([todo], at: 5)
        } throws: { error in
            "\(error)".contains("the journal starts at seq 4 and store 'todo' has no snapshot at or below 5")
        }
    }

    @Test("an action the journal's QUARANTINE lists is skipped, as stores skip it: its reducer, which traps, is never called")
    func quarantinedSkipped() throws {
        // Before, time travel (devtools' `at`, `zflux state --at`, an export) over a poison action
        // trapped in the reducer, taking devtools down with it.
        let dir = try journal([("drill", "tick", "{}"), ("drill", "crash", #"{"note":"poison"}"#), ("drill", "tick", "{}")])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Journal(directory: dir, repair: false).keepQuarantine([
            Quarantine(seq: 2, app: "drill", actionType: "crash", reason: "store drill died 2 times in a row applying it")
        ])
        let rewind = try Rewind(journalDirectory: dir, snapshotDirectory: nil)
        #expect(rewind.quarantined == [2])
        let drill = Rewind.StoreSpec(name: "drill", app: Drill.app())
        func count(at seq: UInt64) throws -> Int {
            let replica = try #require(try rewind.replicas([drill], at: seq).first)
            #expect(replica.version == seq)
            return try JSONDecoder().decode(Drill.State.self, from: Data(try replica.stateJSON())).count
        }
        #expect(try count(at: 2) == 1 && count(at: 3) == 2)
        var seen: [(UInt64, Bool, [String])] = []
        let replicas = try rewind.replicas([drill], at: 0)
        try rewind.advance(replicas, through: 3) { action, changed in
            seen.append((action.header.seq, action.header.flags.contains(.quarantined), changed))
        }
        #expect(seen.map(\.0) == [1, 2, 3] && seen.map(\.1) == [false, true, false] && seen.map(\.2) == [["drill"], [], ["drill"]])
        // An export over it records it, changing nothing.
        var file: [UInt8] = []
        try rewind.writeSession([drill], from: 1, to: 3) { file += $0 }
        let session = try Session.decode(Data(file), source: "the export")
        #expect(session.actions.map(\.changed.isEmpty) == [false, true, false])
    }

    @Test("a session is written in parts as the journal is read, and its bytes are the file Session.encoded() writes")
    func sessionInParts() throws {
        let dir = try journal(todos)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rewind = try Rewind(journalDirectory: dir, snapshotDirectory: nil)
        let stores = [Rewind.StoreSpec(name: "todo", app: Todo.app()), Rewind.StoreSpec(name: "counter", app: Counter.app())]
        for from: UInt64 in [1, 3] {
            var parts: [[UInt8]] = []
            let written = try rewind.writeSession(stores, from: from, to: 6) { parts.append($0) }
            #expect(written.actions == Int(7 - from) && written.stores == 2)
            // One part per action, between the head and the tail: never the whole file at once.
            #expect(parts.count == written.actions + 2)
            let file = parts.flatMap { $0 }
            let session = try Session.decode(Data(file), source: "the export")
            #expect(session.from == from && session.to == 6 && (session.anchor?.seq ?? 0) == from - 1)
            #expect([UInt8](try session.encoded()) == file, "the parts make the file Session.encoded() writes")
        }
        var none = 0
        #expect(throws: RewindError.self) { try rewind.writeSession(stores, from: 7, to: 7) { _ in none += 1 } }
        #expect(none == 0, "nothing is written before the stretch is checked")
    }

    @Test("the history browser: steps of the store's app and of actions that changed it, keys, jump, filter, diff")
    func historyBrowser() throws {
        let dir = try journal(todos + [("todo", "loadTapped", "{}")])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rewind = try Rewind(journalDirectory: dir, snapshotDirectory: nil)
        let stats = Rewind.StoreSpec(name: "stats", app: try #require(Catalog.app(named: "stats")))
        let browser = try HistoryBrowser.load(rewind: rewind, store: stats, screen: StateTreeScreen())
        // stats reads todo: every todo action that changed it is a step; the counter's and the refused one are not.
        #expect(browser.steps.map(\.seq) == [1, 3, 4, 6, 7])
        let todo = Rewind.StoreSpec(name: "todo", app: Todo.app())
        let history = try HistoryBrowser.load(rewind: rewind, store: todo, screen: TodoScreen())
        #expect(history.steps.map(\.seq) == [1, 3, 4, 5, 6, 7], "the store's own app, the refused removeTodo included")
        #expect(history.steps.map(\.changed) == [true, true, true, false, true, true])
        #expect(history.current?.seq == 7)
        #expect(history.handle(.left) == .redraw && history.current?.seq == 6)
        #expect(history.handle(.pageUp) == .redraw && history.current?.seq == 1)
        #expect(history.handle(.end) == .redraw && history.current?.seq == 7)
        for key: Key in [.character("g"), .character("4"), .enter] { _ = history.handle(key) }
        #expect(history.current?.seq == 4)
        let screen = history.render(width: 100, height: 30).map(\.plainText).joined(separator: "\n")
        #expect(screen.contains("seq 4 · todo.toggleTodo") && screen.contains("~ todos[1].done: false → true"), "\(screen)")
        #expect(screen.contains("[x] one"), "the app's screen as of seq 4:\n\(screen)")
        for key: Key in [.character("/"), .character("A"), .character("d"), .character("d"), .enter] { _ = history.handle(key) }
        #expect(history.visible.map { history.steps[$0].seq } == [1, 3, 6] && history.current?.seq == 3, "filtered, nearest before seq 4")
        _ = history.handle(.character("/"))
        #expect(history.takesText, "an open prompt takes ? as text")
        _ = history.handle(.escape)
        #expect(!history.takesText)
        #expect(history.handle(.character("L")) == .leave)
    }

    @Test("the state diff names each path that changed")
    func diff() {
        let old = JSONValue.object(["count": .number(1), "todos": .array([.object(["done": .bool(false)])]), "gone": .null])
        let new = JSONValue.object(["count": .number(2), "todos": .array([.object(["done": .bool(true)])]), "added": .string("x")])
        #expect(
            HistoryBrowser.diff(from: old, to: new).map(\.plainText) == [
                #"+ added: "x""#, "~ count: 1 → 2", "- gone: null", "~ todos[0].done: false → true",
            ])
        #expect(HistoryBrowser.diff(from: new, to: new).isEmpty)
    }

    @Test("a list's diff is a sequence diff: an insert at the top is one line, items with an id keep it")
    func listDiff() {
        func todo(_ title: String, done: Bool = false) -> JSONValue { .object(["title": .string(title), "done": .bool(done)]) }
        let before = JSONValue.object(["todos": .array([todo("one"), todo("two"), todo("three")])])
        let inserted = JSONValue.object(["todos": .array([todo("zero"), todo("one"), todo("two"), todo("three")])])
        #expect(HistoryBrowser.diff(from: before, to: inserted).map(\.plainText) == [#"+ todos[0]: {"done":false,"title":"zero"}"#])
        let removed = JSONValue.object(["todos": .array([todo("one"), todo("three")])])
        #expect(HistoryBrowser.diff(from: before, to: removed).map(\.plainText) == [#"- todos[1]: {"done":false,"title":"two"}"#])
        // Added at the top and the old first one ticked, in one step: the tick keeps the item's identity.
        func item(_ id: Int, _ title: String, done: Bool = false) -> JSONValue {
            .object(["id": .number(Double(id)), "title": .string(title), "done": .bool(done)])
        }
        let old = JSONValue.array([item(1, "one"), item(2, "two")])
        let new = JSONValue.array([item(3, "new"), item(1, "one", done: true), item(2, "two")])
        #expect(
            HistoryBrowser.diff(from: old, to: new).map(\.plainText) == [
                "~ [1].done: false → true", #"+ [0]: {"done":false,"id":3,"title":"new"}"#,
            ])
    }
}

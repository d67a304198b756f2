import Dispatcher
import FluxCore
import Foundation
import NodeSupport
import StoreNode
import TOML

extension Rewind {
    /// Writes the session file of the actions `from…to` and every store's state before and after them
    /// (a ``Session``, the bytes ``Session/encoded()`` gives) to `write`, in parts as the journal is
    /// read: the states before `from`, then one action at a time with the states it left. Nothing but
    /// the replicas and the action at hand is held, so the memory it takes does not grow with the
    /// stretch; `write` may throw to stop it (a byte budget). `progress` is told the seq reached now
    /// and then (long journals). Returns how many actions and stores it wrote.
    @discardableResult
    public func writeSession(
        _ stores: [StoreSpec], from: UInt64, to: UInt64, readers: [any AnyApp] = [], progress: (UInt64) -> Void = { _ in },
        into write: ([UInt8]) throws -> Void
    ) throws -> (actions: Int, stores: Int) {
        var apps: [String: any AnyApp] = [:]
        for app in stores.map(\.app) + readers where apps[app.name] == nil { apps[app.name] = app }
        func payload(_ action: Message) -> JSONValue { Rewind.readablePayload(action, apps: apps) }
        guard from >= 1, from <= to else { throw RewindError("--from must be at least 1 and at most --to (\(from)…\(to))") }
        guard to <= head else { throw RewindError("seq \(to) is beyond the journal's head (\(head))") }
        // A session is the stores' states along the actions: with none, there is nothing to record (and
        // nothing would walk the journal).
        guard !stores.isEmpty else { throw RewindError("a session records stores' states, and there is no store to record") }
        // As Session.encoded() writes it: compact, keys sorted. The keys of the file's object in that
        // order are actions, anchor, codec, format, from, stores, to, so the actions go first, as read.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let replicas = try replicas(stores, at: from - 1)
        let before = try replicas.map { replica in
            Session.Store(
                name: replica.name, app: replica.app.name, version: replica.version, snapshot: Data(try replica.snapshot()),
                state: JSONValue(parsing: try replica.stateJSON()))
        }
        let anchor =
            try from > 1 ? actions(from: from - 1, through: from - 1).first.map { Session.Action($0, payload: payload($0), changed: [:]) } : nil
        try write(Array(#"{"actions":["#.utf8))
        var count = 0
        try advance(replicas, through: to) { action, changed in
            var states: [String: JSONValue] = [:]
            for replica in replicas where changed.contains(replica.name) { states[replica.name] = JSONValue(parsing: try replica.stateJSON()) }
            let encoded = [UInt8](try encoder.encode(Session.Action(action, payload: payload(action), changed: states)))
            try write(count == 0 ? encoded : [UInt8(ascii: ",")] + encoded)
            count += 1
            if action.header.seq % 10_000 == 0 { progress(action.header.seq) }
        }
        precondition(UInt64(count) == to - from + 1, "a session holds every action of its stretch")
        var tail = Array("]".utf8)
        if let anchor { tail += Array(#","anchor":"#.utf8) + (try encoder.encode(anchor)) }
        tail += Array(#","codec":"#.utf8) + (try encoder.encode(format))
        tail += Array(#","format":"#.utf8) + (try encoder.encode(Session.formatName))
        tail += Array(#","from":\#(from),"stores":"#.utf8) + (try encoder.encode(before))
        tail += Array(#","to":\#(to)}"#.utf8)
        try write(tail)
        return (count, before.count)
    }

    /// An action's arguments as JSON, through the app that reads them.
    public static func readablePayload(_ action: Message, apps: [String: any AnyApp]) -> JSONValue {
        if Schedules.isScheduling(topic: action.topic), action.header.actionType == Schedules.scheduleType,
            let request = try? WireCodec().decode(ScheduleRequest.self, from: action.payload)
        {
            // A schedule request: its action read as its app's, not as the bytes it travels in.
            let inner = Message(topic: request.app, header: Header(kind: .action, actionType: request.type), payload: request.payload)
            var fields: [String: JSONValue] = [
                "id": .string(request.id), "app": .string(request.app), "type": .string(request.type),
                "payload": readablePayload(inner, apps: apps),
            ]
            if let at = request.atNanoseconds { fields["at"] = .string(Session.isoTime(at)) }
            if let after = request.afterNanoseconds { fields["after_seconds"] = .number(Double(after) / 1e9) }
            return .object(fields)
        }
        if !WireCodec.isBinary(action.payload) { return JSONValue(parsing: action.payload) }
        if Schedules.isScheduling(topic: action.topic) {
            // A binary cancel (or a request that does not decode): no app reads it, its fields are its own.
            return (try? GenericJSON.json(fromWire: action.payload)).map { JSONValue(parsing: $0) } ?? .null
        }
        guard let app = apps[action.topicString], let json = try? app.actionJSON(fromWire: action.payload) else { return .null }
        return JSONValue(parsing: json)
    }
}

extension Session {
    /// Makes `runDirectory` (missing or empty) the home of a cluster that starts where this session
    /// starts: `cluster.toml` naming its stores, a journal of the recorded actions (the anchor first)
    /// and each store's snapshot at `from - 1`. Once started (`zflux cluster up --run-dir DIR --config
    /// DIR/cluster.toml`) the stores catch up through `to` and hold the recorded states.
    ///
    /// The session is checked first (``validate(apps:maxPayloadBytes:)``), and everything is written
    /// into a new directory beside `runDirectory` that is renamed into place at the end: a refused or
    /// failed import leaves nothing behind.
    public func materialize(runDirectory: String, apps: [any AnyApp]) throws {
        try validate(apps: apps)
        let manager = FileManager.default
        if manager.fileExists(atPath: runDirectory) {
            guard (try manager.contentsOfDirectory(atPath: runDirectory)).isEmpty else {
                throw RewindError("\(runDirectory) is not empty: import into a new run directory")
            }
        }
        let target = URL(fileURLWithPath: runDirectory).standardizedFileURL
        // The staging directory is made by mkdtemp (a fresh name, 0700, never an existing path or a
        // symlink someone planted), and renamed over the target at the end: rename(2) replaces an empty
        // directory atomically and refuses one that is no longer empty, so nothing there is deleted.
        var template = Array(
            target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).importing-XXXXXX").path.utf8CString)
        guard let made = mkdtemp(&template) else {
            throw RewindError("cannot make a directory beside \(target.path): \(String(cString: strerror(errno)))")
        }
        let staging = String(cString: made)
        do {
            try write(into: staging)
            guard rename(staging, target.path) == 0 else {
                throw RewindError("cannot move the import into \(target.path): \(String(cString: strerror(errno)))")
            }
        } catch {
            try? manager.removeItem(atPath: staging)
            throw error
        }
    }

    private func write(into directory: String) throws {
        try RunDirectory.makePrivateDirectory(directory)
        // A history of its own: the cluster is a copy, and must never be taken for the original.
        var random = SystemRandomNumberGenerator()
        let history = HistoryID.opening(
            cluster: HistoryID.newCluster(using: &random), previousEpoch: 0, wallNanoseconds: WallClock.nowNanoseconds())
        let records = ([anchor].compactMap { $0 } + actions).map { $0.message(history: history.rawValue) }
        try Journal.create(directory: directory + "/" + RunDirectory.journalName, history: history, records: records)
        if from > 1 {
            for store in stores {
                try SnapshotFile.write(
                    .init(version: store.version, history: history.rawValue, app: store.app, state: [UInt8](store.snapshot)),
                    to: directory + "/" + RunDirectory.snapshotsName + "/" + store.name + ".snapshot")
            }
        }
        var effectsOwners: Set<String> = []
        let config = ImportedConfig(
            cluster: .init(codec: codec.rawValue),
            journal: .init(directory: RunDirectory.journalName, snapshotDirectory: RunDirectory.snapshotsName),
            store: stores.map { store in
                // One store per app runs its effects, as `cluster check` requires; history replayed runs none.
                ImportedConfig.Store(name: store.name, app: store.app, effects: effectsOwners.insert(store.app).inserted ? nil : false)
            })
        // Written by the TOML library, never pasted together: no value can add a line of its own.
        let text =
            "# Made by `zflux journal import` from a session of seqs \(from)…\(to).\n"
            + (try TOMLEncoder(keyEncodingStrategy: Settings.keyEncoding).encode(config))
        try text.write(toFile: directory + "/cluster.toml", atomically: true, encoding: .utf8)
    }
}

/// The `cluster.toml` an import writes: the sections `ClusterConfig` reads, with only what it needs
/// (written with the settings' keys, as `ClusterConfig` writes its own).
private struct ImportedConfig: Encodable {
    struct Cluster: Encodable {
        var transport = "ipc"
        var codec: String
    }

    struct Journal: Encodable {
        var directory: String
        var snapshotDirectory: String
    }

    struct Store: Encodable {
        var name: String
        var app: String
        var effects: Bool?
    }

    var cluster: Cluster
    var journal: Journal
    var store: [Store]
}

import Dispatcher
import FluxCore
import Foundation
import NodeSupport
import StoreNode

extension Rewind {
    /// Records the actions `from…to` and every store's state before and after them as a ``Session``.
    /// `progress` is told the seq reached now and then (long journals).
    public func export(
        _ stores: [StoreSpec], from: UInt64, to: UInt64, readers: [any AnyApp] = [], progress: (UInt64) -> Void = { _ in }
    ) throws -> Session {
        var apps: [String: any AnyApp] = [:]
        for app in stores.map(\.app) + readers where apps[app.name] == nil { apps[app.name] = app }
        func payload(_ action: Message) -> JSONValue { Rewind.readablePayload(action, apps: apps) }
        guard from >= 1, from <= to else { throw RewindError("--from must be at least 1 and at most --to (\(from)…\(to))") }
        guard to <= head else { throw RewindError("seq \(to) is beyond the journal's head (\(head))") }
        let replicas = try replicas(stores, at: from - 1)
        let before = try replicas.map { replica in
            Session.Store(
                name: replica.name, app: replica.app.name, version: replica.version, snapshot: Data(try replica.snapshot()),
                state: JSONValue(parsing: try replica.stateJSON()))
        }
        let anchor =
            try from > 1 ? actions(from: from - 1, through: from - 1).first.map { Session.Action($0, payload: payload($0), changed: [:]) } : nil
        var recorded: [Session.Action] = []
        try advance(replicas, through: to) { action, changed in
            var states: [String: JSONValue] = [:]
            for replica in replicas where changed.contains(replica.name) { states[replica.name] = JSONValue(parsing: try replica.stateJSON()) }
            recorded.append(Session.Action(action, payload: payload(action), changed: states))
            if action.header.seq % 10_000 == 0 { progress(action.header.seq) }
        }
        return Session(from: from, to: to, codec: format, stores: before, anchor: anchor, actions: recorded)
    }

    /// An action's arguments as JSON, through the app that reads them.
    public static func readablePayload(_ action: Message, apps: [String: any AnyApp]) -> JSONValue {
        if !WireCodec.isBinary(action.payload) { return JSONValue(parsing: action.payload) }
        guard let app = apps[action.topicString], let json = try? app.actionJSON(fromWire: action.payload) else { return .null }
        return JSONValue(parsing: json)
    }
}

extension Session {
    /// Makes `runDirectory` (missing or empty) the home of a cluster that starts where this session
    /// starts: `cluster.toml` naming its stores, a journal of the recorded actions (the anchor first)
    /// and each store's snapshot at `from - 1`. Once started (`zflux cluster up --run-dir DIR --config
    /// DIR/cluster.toml`) the stores catch up through `to` and hold the recorded states.
    public func materialize(runDirectory: String) throws {
        let manager = FileManager.default
        if manager.fileExists(atPath: runDirectory) {
            guard (try manager.contentsOfDirectory(atPath: runDirectory)).isEmpty else {
                throw RewindError("\(runDirectory) is not empty: import into a new run directory")
            }
        }
        try RunDirectory.makePrivateDirectory(runDirectory)
        // A history of its own: the cluster is a copy, and must never be taken for the original.
        var random = SystemRandomNumberGenerator()
        let history = HistoryID.opening(
            cluster: HistoryID.newCluster(using: &random), previousEpoch: 0, wallNanoseconds: WallClock.nowNanoseconds())
        let records = ([anchor].compactMap { $0 } + actions).map { $0.message(history: history.rawValue) }
        try Journal.create(directory: runDirectory + "/" + RunDirectory.journalName, history: history, records: records)
        if from > 1 {
            for store in stores {
                try SnapshotFile.write(
                    .init(version: store.version, history: history.rawValue, app: store.app, state: [UInt8](store.snapshot)),
                    to: runDirectory + "/" + RunDirectory.snapshotsName + "/" + store.name + ".snapshot")
            }
        }
        var config = """
            # Made by `zflux journal import` from a session of seqs \(from)…\(to).
            [cluster]
            transport = "ipc"
            codec = "\(codec.rawValue)"

            [journal]
            directory = "\(RunDirectory.journalName)"
            snapshot_directory = "\(RunDirectory.snapshotsName)"

            """
        var effectsOwners: Set<String> = []
        for store in stores {
            // One store per app runs its effects, as `cluster check` requires; history replayed runs none.
            let owner = effectsOwners.insert(store.app).inserted
            config += "\n[[store]]\nname = \"\(store.name)\"\napp = \"\(store.app)\"\n" + (owner ? "" : "effects = false\n")
        }
        try config.write(toFile: runDirectory + "/cluster.toml", atomically: true, encoding: .utf8)
    }
}

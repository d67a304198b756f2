import Dispatcher
import FluxCore
import Foundation
import StoreNode

/// Time travel over a cluster's journal: stores' states as of any seq, rebuilt outside the cluster
/// from the nearest snapshot at or below that seq (or the journal's start) plus the journal's
/// actions, with the stores' own reducers and no effects. Reads the journal read-only, so a running
/// cluster is not disturbed.
public final class Rewind {
    /// A store to rebuild: its name, its app, and the codec the cluster writes states in.
    public struct StoreSpec: Sendable {
        public var name: String
        public var app: any AnyApp
        public init(name: String, app: any AnyApp) {
            self.name = name
            self.app = app
        }
    }

    /// One store's state machine, rebuilt up to `version`.
    public final class Replica {
        public let name: String
        public let app: any AnyApp
        public private(set) var version: UInt64
        let runtime: any AppRuntime

        public init(name: String, app: any AnyApp, format: WireCodec.Format, version: UInt64, snapshot: [UInt8]?) throws {
            self.name = name
            self.app = app
            self.version = version
            runtime = app.makeRuntime(format: format) { _, _, _ in }
            if let snapshot { try runtime.loadSnapshot(snapshot) }
        }

        /// Applies the next action (any app's). Returns whether the state's bytes changed; a rejected
        /// or foreign action leaves them as they are, as in the store.
        @discardableResult
        public func apply(_ action: Message) throws -> Bool {
            precondition(action.header.seq == version + 1, "actions apply in order")
            version = action.header.seq
            let before = try runtime.encodedState()
            do {
                guard
                    try runtime.apply(
                        app: action.topicString, actionType: action.header.actionType, payload: action.payload,
                        stamp: Stamp(action.header), runEffects: false)
                else { return false }
            } catch {
                return false
            }
            return try runtime.encodedState() != before
        }

        /// Steps over a quarantined action as a store does (``Header/Flags/quarantined``): the version
        /// moves past it and the state stays, and the reducer that traps on it is never called.
        public func skip(_ action: Message) {
            precondition(action.header.seq == version + 1, "actions are skipped in order too")
            version = action.header.seq
        }

        /// The state in the cluster's codec.
        public func state() throws -> [UInt8] { try runtime.encodedState() }
        /// The state as JSON.
        public func stateJSON() throws -> [UInt8] { try app.stateJSON(fromWire: try runtime.encodedState()) }
        /// What a store would keep in its snapshot to resume here.
        public func snapshot() throws -> [UInt8] { try runtime.encodedSnapshot() }
    }

    public let journal: Journal
    /// The seqs of the journal's `QUARANTINE` list: every store skips them, and so does time travel
    /// (a quarantined action is one whose reducer traps).
    public let quarantined: Set<UInt64>
    let snapshotDirectory: String?
    let format: WireCodec.Format

    /// Opens the journal in `journalDirectory` read-only; snapshots are looked for in
    /// `snapshotDirectory` (`NAME.snapshot`, as stores write them).
    public init(journalDirectory: String, snapshotDirectory: String?, format: WireCodec.Format = .binary) throws {
        guard FileManager.default.fileExists(atPath: journalDirectory) else { throw RewindError("no journal at \(journalDirectory)") }
        journal = try Journal(directory: journalDirectory, repair: false, tailCapacity: 1, tailByteCapacity: 1)
        // Released or not: a release sequences the action again at a new seq, and the old one stays skipped.
        quarantined = Set(try journal.quarantine().map(\.seq))
        self.snapshotDirectory = snapshotDirectory
        self.format = format
    }

    /// The newest seq in the journal.
    public var head: UInt64 { journal.lastSeq }

    /// Every store in `stores` as of `seq` (after the action at `seq`; 0 is the empty state).
    public func replicas(_ stores: [StoreSpec], at seq: UInt64) throws -> [Replica] {
        guard seq <= head else { throw RewindError("seq \(seq) is beyond the journal's head (\(head))") }
        let first = journal.firstSeq
        var replicas: [Replica] = []
        for store in stores {
            // A snapshot at or below `seq` that the journal continues from, else the journal's start.
            var base: SnapshotFile.Contents? = nil
            if let directory = snapshotDirectory, let contents = try? SnapshotFile.read(directory + "/" + store.name + ".snapshot"),
                contents.app == store.app.name, contents.version <= seq, contents.version + 1 >= first,
                contents.history == 0 || HistoryID(rawValue: contents.history).cluster == journal.history.cluster
            {
                base = contents
            }
            if base == nil && first > 1 {
                throw RewindError(
                    "the journal starts at seq \(first) and store '\(store.name)' has no snapshot at or below \(seq) to start from: "
                        + "its state at \(seq) is no longer kept (docs/OPERATIONS.md, \"A journal that starts above 1\")")
            }
            replicas.append(
                try Replica(name: store.name, app: store.app, format: format, version: base?.version ?? 0, snapshot: base?.state))
        }
        try advance(replicas, through: seq)
        return replicas
    }

    /// Applies the journal's actions to `replicas` up to `seq`; `body` sees each action after it was
    /// applied, with the names of the stores whose state it changed. A quarantined action is skipped,
    /// as the stores skip it, and `body` sees it flagged ``Header/Flags/quarantined``, changing nothing.
    public func advance(_ replicas: [Replica], through seq: UInt64, _ body: (Message, [String]) throws -> Void = { _, _ in }) throws {
        guard let start = replicas.map(\.version).min(), start < seq else { return }
        guard seq <= head else { throw RewindError("seq \(seq) is beyond the journal's head (\(head))") }
        try journal.forEach(from: start + 1, through: seq) { action in
            let due = replicas.filter { $0.version + 1 == action.header.seq }
            guard !quarantined.contains(action.header.seq) else {
                for replica in due { replica.skip(action) }
                var skipped = action
                skipped.header.flags.insert(.quarantined)
                return try body(skipped, [])
            }
            var changed: [String] = []
            for replica in due where try replica.apply(action) { changed.append(replica.name) }
            try body(action, changed)
        }
    }

    /// The actions `from…through`, as the journal holds them.
    public func actions(from: UInt64, through: UInt64) throws -> [Message] {
        var result: [Message] = []
        try journal.forEach(from: from, through: through) { result.append($0) }
        return result
    }
}

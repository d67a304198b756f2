import Examples
import FluxCore
import Logging
import NodeCores
import Testing

/// The sans-IO cores driven directly: events in, commands out, time as an input. No socket, thread,
/// clock or file is involved, so every schedule here is exact.
enum CoreFixtures {
    static let logger = Logger(label: "core-tests") { _ in SwiftLogNoOpLogHandler() }
    static let history = HistoryID(cluster: 0xC1, epoch: 1)

    static func at(_ milliseconds: UInt64) -> NodeTime { NodeTime(milliseconds: milliseconds, wallNanoseconds: Int64(milliseconds) * 1_000_000) }

    static let increment: [UInt8] = {
        do {
            return try Counter.app().wirePayload(type: "incrementTapped", argumentsJSON: [])
        } catch {
            Issue.record(error, "the counter's incrementTapped payload")
            return []
        }
    }()

    static func action(_ seq: UInt64, clientID: UInt64 = 0, clientSeq: UInt64 = 0) -> Message {
        Message(
            topic: "counter", header: Header(kind: .action, seq: seq, clientID: clientID, clientSeq: clientSeq, actionType: "incrementTapped"),
            payload: increment)
    }

    static func heartbeat(_ seq: UInt64) -> Message { Message(header: Header(kind: .heartbeat, seq: seq)) }

    static func replayBatch(_ seqs: ClosedRange<UInt64>) -> Message {
        Message(header: Header(kind: .replayBatch, seq: seqs.lowerBound, ref: seqs.upperBound), payload: ReplayBatch.encode(seqs.map { action($0) }))
    }

    static func replayEnd(head: UInt64) -> Message { Message(header: Header(kind: .replayEnd, seq: head)) }

    static func storeRules(snapshots: Bool = false) -> StoreRules {
        var rules = StoreRules(name: "counter", app: Counter.app())
        if snapshots {
            rules.writesSnapshots = true
            rules.snapshotEveryActions = 2
        }
        return rules
    }

    /// A dispatcher of `apps` whose journal holds `firstSeq…head`; `rate` limits each client, and
    /// `clientScope` scopes client ids to the keys that send them.
    static func makeDispatcher(
        apps: [any AnyApp] = [Counter.app()], rate: Int? = nil, head: UInt64 = 0, firstSeq: UInt64 = 1,
        clientScope: ClientScope = ClientScope(k0: 0, k1: 0)
    ) -> DispatcherCore {
        var rules = DispatcherRules(apps: apps)
        rules.clientRate = rate
        return DispatcherCore(
            rules: rules, head: head, firstSeq: firstSeq, history: history, now: at(0), logger: logger, clientScope: clientScope)
    }
}

/// A runtime that counts the actions offered to it and asks for an effect after each: the store core
/// decides which of those effects its shell starts (`.runEffects`).
final class RecordingRuntime: AppRuntime {
    var count = 0
    /// Action types its reducer refuses (REJECTED), the state unchanged.
    var refuses: Set<String> = []
    func reduce(app: String, actionType: String, payload: [UInt8], stamp: Stamp) throws(ActionError) -> PendingEffects? {
        if refuses.contains(actionType) { throw ActionError("refused: \(actionType)") }
        count += 1
        return PendingEffects(Effect<String>.send(actionType), send: Send { _ in })
    }
    func apply(app: String, actionType: String, payload: [UInt8], stamp: Stamp, runEffects: Bool) throws(ActionError) -> Bool {
        try reduce(app: app, actionType: actionType, payload: payload, stamp: stamp) != nil
    }
    func encodedState() throws -> [UInt8] { Array("\(count)".utf8) }
    func takeChanges() throws -> [UInt8]? { nil }
    func forgetChanges() {}
    func loadState(_ bytes: [UInt8]) throws { count = Int(String(decoding: bytes, as: UTF8.self)) ?? 0 }
    func encodedSnapshot() throws -> [UInt8] { try encodedState() }
    func loadSnapshot(_ bytes: [UInt8]) throws { try loadState(bytes) }
    var effectsInFlight: Int { 0 }
    func cancelEffects() {}
}

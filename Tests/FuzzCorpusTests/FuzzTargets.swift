import Bench
import Cluster
import Examples
import FluxCore
import Foundation
import Logging
import NodeCores

// The SwiftPM build of the corpus test reaches the session and segment-index formats in their own
// modules; scripts/fuzz.sh compiles those files into the fuzzer's module instead.
#if canImport(Devtools)
    @testable import Devtools
    @testable import Dispatcher
    @testable import Journaling
#endif

// zflux's fuzz targets: every decoder zflux runs on bytes from outside, each with the round trips and
// bounds that must hold for whatever decodes. Two programs run them:
// - scripts/fuzz.sh builds them into a libFuzzer binary (with Fuzz/FuzzMain.swift), for `make fuzz`;
// - the corpus test (CorpusTests.swift) runs every committed input of Fuzz/corpus through them in
//   `make test`, so each crash found once stays a regression test.
// Each host defines `fuzzCheck`: the fuzzer traps, the test records an issue and goes on.

/// The target names, one corpus directory each (Fuzz/corpus/NAME).
let fuzzTargets = [
    "header", "message", "replay", "journal", "snapshot", "action", "actions", "view-state", "view-changes", "parts", "session", "index",
    "action-batch", "ack-batch", "binary-json", "wire-reader", "replica", "dispatch-batch", "binary-structure", "config", "workload",
]
let todo = Todo.app(environment: .mock())
/// Every app of the catalog, with its mock environment (nothing reaches the network or the disk), and
/// its action types: the targets below pick an app, a codec and an action type with the first bytes.
let apps = Catalog.apps(Catalog.Context(mock: true))
let actionTypes = apps.map { app in app.describe().actions.map(\.type) + ["nope"] }
let formats: [WireCodec.Format] = [.binary, .json]
/// The node cores log through swift-log; the fuzz targets drop it.
let quiet = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })

/// The app (and codec) the first two bytes pick, and the rest of the input.
func pick(_ bytes: [UInt8]) -> (app: any AnyApp, index: Int, format: WireCodec.Format, rest: [UInt8])? {
    guard bytes.count >= 2 else { return nil }
    let index = Int(bytes[0]) % apps.count
    return (apps[index], index, formats[Int(bytes[1]) % formats.count], Array(bytes.dropFirst(2)))
}

/// Runs one input through one target: any input must give a value or a typed error, and what decodes
/// must pass the target's checks.
func fuzzOne(_ target: String, _ bytes: [UInt8]) {
    switch target {
    case "header":
        if let header = try? Header(decoding: bytes) {
            // Whatever decodes must encode back: to the same bytes when it was a current header; a
            // version-1 header (still read) is written as the current version, with the same values.
            if bytes[2] == header.kind.protocolVersion {
                fuzzCheck(header.encoded() == bytes, "header does not round-trip")
            } else {
                fuzzCheck((try? Header(decoding: header.encoded())) == header, "a version-1 header does not survive re-encoding")
            }
        }
    case "message":
        // The input is split into frames at 0xFF bytes: frame counts and sizes vary with it.
        let frames = bytes.split(separator: 0xFF, omittingEmptySubsequences: false).map(Array.init)
        _ = try? Message(frames: frames)
        _ = try? Message.split(routed: frames)
    case "replay":
        if let messages = try? ReplayBatch.decode(bytes) {
            // Entries with version-1 headers are written back as the current version: compare values.
            fuzzCheck((try? ReplayBatch.decode(ReplayBatch.encode(messages))) == messages, "replay batch does not round-trip")
        }
    case "action-batch":
        // The first byte is the batch's topic length; then the topic, the header's seq and ref (8
        // bytes each), and the rest is the payload.
        guard let topicLength = bytes.first.map(Int.init), bytes.count >= 1 + topicLength + 16 else { break }
        let topic = Array(bytes[1..<1 + topicLength])
        let numbers = Array(bytes[(1 + topicLength)..<(17 + topicLength)])
        let batch = Message(
            topic: topic,
            header: Header(kind: .actionBatch, seq: numbers.readLittleEndian(UInt64.self, at: 0), ref: numbers.readLittleEndian(UInt64.self, at: 8)),
            payload: Array(bytes[(17 + topicLength)...]))
        if let actions = try? ActionBatch.actions(of: batch) {
            // What decodes is what the dispatcher would have packed for these actions.
            let packed = ActionBatch.messages(for: actions, history: 0)
            fuzzCheck(packed.flatMap { (try? ActionBatch.unpack($0)) ?? [] } == actions, "an action batch does not round-trip")
        }
    case "ack-batch":
        let message = Message(header: Header(kind: .ackBatch, seq: UInt64(bytes.count / AckBatch.entryBytes)), payload: bytes)
        if let batch = try? AckBatch(message) {
            fuzzCheck((try? AckBatch(batch.message)) == batch, "an ACK batch does not round-trip")
            fuzzCheck(batch.acks.count == batch.entries.count, "an ACK batch loses entries")
        }
    case "journal":
        var offset = 0
        while offset < bytes.count, case .success(let record) = JournalRecord.read(bytes, at: offset) {
            // The check an opening journal makes without decoding agrees with reading the record whole.
            let checked = bytes.withUnsafeBytes { JournalRecord.check($0, at: offset) }
            guard case .success(let found) = checked, found.size == record.size, found.seq == record.message.header.seq else {
                fuzzCheck(false, "a record that reads whole fails its check")
                break
            }
            offset += record.size
        }
        // And the check alone never reads out of bounds, wherever it starts.
        for start in [0, 1, bytes.count / 2] where start < bytes.count { _ = bytes.withUnsafeBytes { JournalRecord.check($0, at: start) } }
    case "snapshot":
        _ = try? SnapshotFormat.decode(bytes)
    case "action":
        // A header-like prefix picks the action type; the rest is the payload.
        let type = ["addTodo", "toggleTodo", "removeTodo", "clearCompleted", "loadTapped", "todosLoaded", "nope"][Int(bytes.first ?? 0) % 7]
        try? todo.check(actionType: type, payload: Array(bytes.dropFirst()))
        if let runtime = Optional(todo.makeRuntime { _, _, _ in }) {
            _ = try? runtime.apply(app: "todo", actionType: type, payload: Array(bytes.dropFirst()), stamp: .unstamped, runEffects: false)
        }
    case "actions":
        // Every app's action decoder: the third byte picks the action type, the rest is its payload,
        // checked at the intake, applied by a store and shown as JSON by `zflux tail`.
        guard let (app, index, format, rest) = pick(bytes), let typeByte = rest.first else { break }
        let types = actionTypes[index]
        let type = types[Int(typeByte) % types.count]
        let payload = Array(rest.dropFirst())
        _ = try? app.check(actionType: type, payload: payload)
        _ = try? app.actionJSON(fromWire: payload)
        let runtime = app.makeRuntime(format: format) { _, _, _ in }
        _ = try? runtime.apply(app: app.name, actionType: type, payload: payload, stamp: .unstamped, runEffects: false)
        _ = try? runtime.encodedState()
    case "view-state":
        // A view's replica loading a whole state (STATE with fullState, SNAPSHOT); what loads must encode
        // and load again, and render for the terminal.
        guard let (app, _, format, rest) = pick(bytes) else { break }
        let replica = app.makeReplica(format: format)
        if (try? replica.load(rest)) != nil, let again = try? replica.encodedState() {
            fuzzCheck((try? app.makeReplica(format: format).load(again)) != nil, "a state a view loaded does not load again")
        }
        _ = try? app.stateJSON(fromWire: rest)
        _ = try? app.render(wire: rest)
    case "view-changes":
        // A view's replica applying a changes-only update on top of the app's initial state.
        guard let (app, _, format, rest) = pick(bytes) else { break }
        let replica = app.makeReplica(format: format)
        guard let initial = try? app.makeRuntime(format: format, deliver: { _, _, _ in }).encodedState(), (try? replica.load(initial)) != nil
        else { break }
        _ = try? replica.apply(changes: rest)
        _ = try? replica.encodedState()
    case "parts":
        // Messages in parts, split from the input at 0xFE bytes, each read as a STATE part.
        var assembler = MessageAssembler()
        for chunk in bytes.split(separator: 0xFE, omittingEmptySubsequences: false) {
            let header = Header(kind: .state, flags: [.fullState, .part], seq: 1)
            _ = assembler.accept(Message(topic: "s", header: header, payload: Array(chunk)))
        }
    case "session":
        // A session file from someone else (`journal import`): reading it as `load` does and the checks before anything
        // is written turn any bytes into a session or an error; a session that passes makes messages.
        guard let session = try? Session.decode(Data(bytes), source: "fuzz") else { break }
        if (try? session.validate(apps: apps)) != nil {
            for action in [session.anchor].compactMap({ $0 }) + session.actions { _ = action.message(history: 1).frames }
            fuzzCheck((try? session.encoded()) != nil, "a valid session does not encode")
        }
    case "index":
        // A sealed segment's index file: whatever decodes is within its own bounds and encodes back.
        if let index = SegmentIndex.decode(bytes) {
            fuzzCheck(index.encoded() == bytes, "an index file does not round-trip")
            fuzzCheck(index.entries.allSatisfy { $0.offset < index.length && $0.seq <= index.lastSeq }, "an entry outside its segment")
        }
    case "binary-json":
        // The schemaless transcoders `tail`, `state` and `journal dump` print payloads of apps they do not
        // host with: the first byte picks the binary or the JSON reader. What they write must be JSON.
        guard let first = bytes.first else { break }
        let input = first % 2 == 0 ? [BinaryPayloadCodec.marker] + bytes.dropFirst() : Array(bytes.dropFirst())
        if let json = try? GenericJSON.json(fromWire: input) {
            fuzzCheck(
                (try? JSONSerialization.jsonObject(with: Data(json), options: .fragmentsAllowed)) != nil, "the transcoder wrote text that is not JSON"
            )
            _ = try? GenericJSON.prettyText(fromWire: input)
        }
    case "wire-reader":
        // The binary format's reader, as generated decoders drive it: a walk over maps, arrays and scalars
        // turns any bytes into values or a thrown error.
        var reader = WireReader(bytes)
        func walk(_ depth: Int) -> Bool {
            guard depth < 64 else { return (try? reader.skipValue()) != nil }
            if let map = try? reader.beginMap() {
                for _ in 0..<min(map.count, 4096) {
                    guard (try? reader.readKey()) != nil, walk(depth + 1) else { return false }
                }
                return (try? reader.end(map)) != nil
            }
            if let array = try? reader.beginArray() {
                for _ in 0..<min(array.count, 4096) where !walk(depth + 1) { return false }
                return (try? reader.end(array)) != nil
            }
            if (try? reader.readNil()) == true { return true }
            if (try? reader.read(String.self)) != nil || (try? reader.readInteger(Int64.self)) != nil || (try? reader.read(Double.self)) != nil
                || (try? reader.read(Bool.self)) != nil
            {
                return true
            }
            return (try? reader.skipValue()) != nil
        }
        while reader.offset < bytes.count && walk(0) {}
    case "replica":
        // What a peer on a pair's replication port may send (issue 35): messages split at 0xFE, each
        // in frames split at 0xFF, into a standby's core and into a sync leader's. Any of them is a
        // decision or nothing, never a trap.
        let now = NodeTime(milliseconds: 1_000, wallNanoseconds: 1_700_000_000_000_000_000)
        let leading = HistoryID(cluster: 1, epoch: 5), older = HistoryID(cluster: 1, epoch: 3)
        var rules = DispatcherRules(apps: [Counter.app()])
        rules.replication = .sync
        let leader = DispatcherCore(rules: rules, head: 10, history: leading, now: now, logger: quiet)
        let standby = StandbyCore(lastSeq: 10, lastStamp: older.rawValue, newestEpoch: older.epoch, now: now, logger: quiet)
        for (index, part) in bytes.split(separator: 0xFE, omittingEmptySubsequences: false).prefix(64).enumerated() {
            let frames = part.split(separator: 0xFF, omittingEmptySubsequences: false).map(Array.init)
            guard let message = try? Message(frames: frames) else { continue }
            let later = NodeTime(milliseconds: now.milliseconds + UInt64(index) * 150, wallNanoseconds: now.wallNanoseconds)
            leader.receivedReplication(message, from: [UInt8(index % 3)], now: later) { $0 >= 1 && $0 <= 10 ? leading.rawValue : nil }
            standby.received(message, now: later)
            leader.tick(now: later)
            standby.tick(now: later)
            _ = leader.takeCommands()
            _ = standby.takeCommands()
        }
    case "dispatch-batch":
        // A DISPATCH-BATCH as a client may send it (issue 36): its first byte the count it claims, the
        // rest its payload, into a dispatcher core with every catalog app. Each entry is an ACK or a
        // NACK, the whole a NACK, never a trap.
        guard let count = bytes.first else { break }
        let batch = Message(header: Header(kind: .dispatchBatch, flags: .batchReplies, seq: UInt64(count)), payload: Array(bytes.dropFirst()))
        let now = NodeTime(milliseconds: 1_000, wallNanoseconds: 1_700_000_000_000_000_000)
        let core = DispatcherCore(rules: DispatcherRules(apps: apps), head: 0, history: HistoryID(cluster: 1, epoch: 1), now: now, logger: quiet)
        core.receivedIntake(.success(batch), from: [1], now: now)
        core.endOfBurst()
        if core.head > 0 { core.durable(through: core.head) }
        _ = core.takeCommands()
    case "binary-structure":
        // The intake's in-place check of a binary payload (issue 36): any bytes are well formed or not,
        // never a trap, and what it calls well formed a reader walks to its end.
        let wellFormed = BinaryPayloadCodec.isWellFormed(bytes)
        if wellFormed {
            _ = try? GenericJSON.json(fromWire: bytes)
            fuzzCheck(bytes.first == BinaryPayloadCodec.marker, "well formed without the marker")
        }
        // Read in place, as the intake reads a DISPATCH-BATCH's entry: the same answers with other
        // bytes around it, which a reader must never count in.
        let around = [0xB1, 0x09, 0xFF] + bytes + [0x09, 0x00, 0xFF, 0xFF]
        fuzzCheck(
            BinaryPayloadCodec.isWellFormed(around, in: 3..<(3 + bytes.count)) == wellFormed, "well formed in place and alone disagree")
        for type in ["addTodo", "incrementTapped", "a"] {
            fuzzCheck(
                BinaryPayloadCodec.firstKey(of: around, in: 3..<(3 + bytes.count), is: type) == BinaryPayloadCodec.firstKey(of: bytes, is: type),
                "the first key in place and alone disagree")
        }
    case "config":
        // A cluster config as `cluster up --config` reads it (issue 35): the TOML parser, the decode and
        // the check of unknown keys. Any text is a config or an error with a line, never a trap.
        _ = try? ClusterConfig.parse(String(decoding: bytes, as: UTF8.self), source: "fuzz.toml")
    case "workload":
        // A workload file as `zflux bench --workload` reads it, templates included.
        _ = try? Workload.parse(toml: String(decoding: bytes, as: UTF8.self), source: "fuzz.toml")
    default:
        fuzzCheck(false, "unknown fuzz target \(target)")
    }
}

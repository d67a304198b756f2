// Counts the heap allocations per action of the dispatcher's core and of a store's core, the two
// places every action passes through, as swift-nio's allocation-counter tests count theirs.
//
//   zflux-allocations [ACTIONS]
//
// Prints one JSON object: allocations per action for each core, measured over ACTIONS ledger.post
// actions (10,000 by default) in bursts of 100, after a warm-up that fills every table once; and the
// dispatcher's core again over counter.addTapped, an app with neither validate nor middleware, whose
// payloads the intake checks in place instead of decoding them; and a third time over the same actions
// in DISPATCH-BATCHes of 100, whose entries it admits where they lie in the batch.
// `AllocationTests` runs it and fails when a count grows past its recorded limit.
import CAllocationCounter
import Examples
import FluxCore
import Logging
import NodeCores

let actions = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 10_000
let burst = 100
let quiet = Logger(label: "allocations") { _ in SwiftLogNoOpLogHandler() }
let ledger = Ledger.app()
func at(_ milliseconds: UInt64) -> NodeTime { NodeTime(milliseconds: milliseconds, wallNanoseconds: Int64(milliseconds) * 1_000_000) }

let counter = Counter.app()
let payloads: [[UInt8]]
let counterPayloads: [[UInt8]]
do {
    payloads = try (0..<16).map { index in
        try ledger.wirePayload(type: "post", argumentsJSON: Array(#"{"account":\#(index),"amount":5,"memo":"rent"}"#.utf8))
    }
    counterPayloads = try (0..<16).map { index in try counter.wirePayload(type: "addTapped", argumentsJSON: Array(#"{"amount":\#(index)}"#.utf8)) }
} catch {
    fatalError("the example payloads: \(error)")
}

/// The dispatcher's core: `count` dispatches of `app.type` from one batching client, a burst at a time,
/// each burst made durable and released. Returns what was published, for the store.
func runDispatcher(
    from first: Int, count: Int, core: DispatcherCore, published: inout [Message], app: String = "ledger", type: String = "post",
    payloads: [[UInt8]] = payloads
) {
    var position = first
    while position < first + count {
        for _ in 0..<burst {
            let dispatch = Message(
                topic: Array(app.utf8),
                header: Header(kind: .dispatch, flags: .batchReplies, clientID: 1, clientSeq: UInt64(position + 1), actionType: type),
                payload: payloads[position % payloads.count])
            core.receivedIntake(.success(dispatch), from: [1, 2, 3, 4, 5], now: at(UInt64(position)))
            position += 1
        }
        release(core, into: &published)
    }
}

/// Ends a burst of `core`'s: made durable and released, what it published kept (for the store).
func release(_ core: DispatcherCore, into published: inout [Message]) {
    core.endOfBurst()
    core.durable(through: core.head)
    for command in core.takeCommands() { if case .publish(let message) = command { published.append(message) } }
}

let dispatcher = DispatcherCore(
    rules: DispatcherRules(apps: [ledger]), head: 0, history: HistoryID(cluster: 1, epoch: 1), now: at(0), logger: quiet)
var warmUpPublished: [Message] = []
let warmUp = 2_000
runDispatcher(from: 0, count: warmUp, core: dispatcher, published: &warmUpPublished)
var published: [Message] = []
published.reserveCapacity(actions)
var before = zflux_allocation_count()
runDispatcher(from: warmUp, count: actions, core: dispatcher, published: &published)
let dispatcherAllocations = Double(zflux_allocation_count() - before) / Double(actions)

// A store's core applying what the dispatcher published: the warm-up's messages, then the counted ones.
let store = StoreCore(
    rules: StoreRules(name: "ledger", app: ledger), snapshot: nil, effectClientID: 7, now: at(0), logger: quiet
) { ledger.makeRuntime { _, _, _ in } }
store.start(now: at(0))
store.receivedReplay(Message(header: Header(kind: .replayEnd, seq: 0)), now: at(1))
_ = store.takeCommands()
func apply(_ messages: [Message], from time: UInt64, to store: StoreCore) {
    for (index, message) in messages.enumerated() {
        store.receivedFromDispatcher(message, now: at(time + UInt64(index)))
        store.tick(now: at(time + UInt64(index)))
        _ = store.takeCommands()
    }
}
apply(warmUpPublished, from: 10, to: store)
before = zflux_allocation_count()
apply(published, from: 100_000, to: store)
let storeAllocations = Double(zflux_allocation_count() - before) / Double(actions)
guard store.version == UInt64(warmUp + actions) else {
    fatalError("the store applied up to \(store.version), not \(warmUp + actions)")
}
// The dispatcher again, over an app whose payloads are checked in place.
let unvalidated = DispatcherCore(
    rules: DispatcherRules(apps: [counter]), head: 0, history: HistoryID(cluster: 1, epoch: 1), now: at(0), logger: quiet)
var dropped: [Message] = []
runDispatcher(from: 0, count: warmUp, core: unvalidated, published: &dropped, app: "counter", type: "addTapped", payloads: counterPayloads)
dropped.removeAll(keepingCapacity: true)
before = zflux_allocation_count()
runDispatcher(from: warmUp, count: actions, core: unvalidated, published: &dropped, app: "counter", type: "addTapped", payloads: counterPayloads)
let unvalidatedAllocations = Double(zflux_allocation_count() - before) / Double(actions)

// The dispatcher a third time, as a batching client reaches it: each burst one DISPATCH-BATCH of
// counter.addTapped, built before the count starts (the client's work), admitted in place.
func batches(from first: Int, count: Int) -> [Message] {
    stride(from: first, to: first + count, by: burst).map { start in
        DispatchBatch.message(
            (start..<min(start + burst, first + count)).map { position in
                Message(
                    topic: Array("counter".utf8),
                    header: Header(kind: .dispatch, clientID: 1, clientSeq: UInt64(position + 1), actionType: "addTapped"),
                    payload: counterPayloads[position % counterPayloads.count])
            })
    }
}
let batching = DispatcherCore(
    rules: DispatcherRules(apps: [counter]), head: 0, history: HistoryID(cluster: 1, epoch: 1), now: at(0), logger: quiet)
func runBatches(_ messages: [Message], core: DispatcherCore, published: inout [Message]) {
    for (index, batch) in messages.enumerated() {
        core.receivedIntake(.success(batch), from: [1, 2, 3, 4, 5], now: at(UInt64(index)))
        release(core, into: &published)
    }
}
let warmUpBatches = batches(from: 0, count: warmUp), countedBatches = batches(from: warmUp, count: actions)
runBatches(warmUpBatches, core: batching, published: &dropped)
dropped.removeAll(keepingCapacity: true)
before = zflux_allocation_count()
runBatches(countedBatches, core: batching, published: &dropped)
let batchedAllocations = Double(zflux_allocation_count() - before) / Double(actions)
guard batching.head == UInt64(warmUp + actions) else { fatalError("the batching dispatcher sequenced \(batching.head)") }

#if DEBUG
    let build = "debug"
#else
    let build = "release"
#endif
print(
    #"{"actions":\#(actions),"build":"\#(build)","dispatcher_per_action":\#(dispatcherAllocations),"#
        + #""dispatcher_unvalidated_per_action":\#(unvalidatedAllocations),"dispatcher_batched_per_action":\#(batchedAllocations),"#
        + #""store_per_action":\#(storeAllocations)}"#
)

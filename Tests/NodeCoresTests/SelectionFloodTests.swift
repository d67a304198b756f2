import Examples
import FluxCore
import NodeCores
import Testing

/// A peer flooding a store's state publisher with selection subscriptions (hardening round 3): the
/// store does no work twice and follows no more than its cap.
@Suite("Selection floods")
struct SelectionFloodTests {
    typealias F = CoreFixtures

    /// The counter app's own runtime, counting how often the store reads its whole state.
    final class CountingRuntime: AppRuntime {
        let inner = Counter.app().makeRuntime(format: .binary) { _, _, _ in }
        var stateReads = 0
        func reduce(app: String, actionType: String, payload: [UInt8], stamp: Stamp) throws(ActionError) -> PendingEffects? {
            try inner.reduce(app: app, actionType: actionType, payload: payload, stamp: stamp)
        }
        func apply(app: String, actionType: String, payload: [UInt8], stamp: Stamp, runEffects: Bool) throws(ActionError) -> Bool {
            try inner.apply(app: app, actionType: actionType, payload: payload, stamp: stamp, runEffects: runEffects)
        }
        func encodedState() throws -> [UInt8] {
            stateReads += 1
            return try inner.encodedState()
        }
        func takeChanges() throws -> [UInt8]? { try inner.takeChanges() }
        func forgetChanges() { inner.forgetChanges() }
        func loadState(_ bytes: [UInt8]) throws { try inner.loadState(bytes) }
        func encodedSnapshot() throws -> [UInt8] { try inner.encodedSnapshot() }
        func loadSnapshot(_ bytes: [UInt8]) throws { try inner.loadSnapshot(bytes) }
        var effectsInFlight: Int { inner.effectsInFlight }
        func cancelEffects() { inner.cancelEffects() }
    }

    /// A counter store caught up with an empty journal, reading its state through `CountingRuntime`.
    func caughtUpStore() -> (StoreCore, CountingRuntime) {
        let runtime = CountingRuntime()
        let core = StoreCore(rules: F.storeRules(), snapshot: nil, effectClientID: 7, now: F.at(0), logger: F.logger) { runtime }
        core.start(now: F.at(0))
        core.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        return (core, runtime)
    }

    /// A hostile peer's 256 topics of its own: the cap is full.
    func fillTheCap(_ core: StoreCore) throws {
        for index in 0..<256 {
            core.subscriptionChanged(topic: try StatePath(parsing: "k\(index)").topic(store: "counter"), subscribed: true, now: F.at(2))
        }
    }

    @Test("a repeated subscribe is a lookup, the state is read once per version for any number of topics, and the cap holds")
    func flood() throws {
        let (core, runtime) = caughtUpStore()
        _ = core.takeCommands()
        let reads = runtime.stateReads
        let topic = try StatePath(parsing: "count").topic(store: "counter")
        for _ in 0..<1_000 { core.subscriptionChanged(topic: topic, subscribed: true, now: F.at(2)) }
        #expect(core.takeCommands().compactMap(\.published).map(\.topicString) == [topic], "the value is published once")
        #expect(runtime.stateReads - reads == 1, "and the state read once")

        for index in 0..<300 {
            core.subscriptionChanged(topic: try StatePath(parsing: "k\(index)").topic(store: "counter"), subscribed: true, now: F.at(3))
        }
        #expect(core.takeCommands().compactMap(\.published).count == 255, "up to the cap of 256 topics")
        #expect(runtime.stateReads - reads == 1, "all of one version: still one read")
        #expect(core.status(now: F.at(3), subscribers: 0, pid: 0).version == 0)

        // The followed value moves on with the state, read once for the new version.
        core.receivedFromDispatcher(F.action(1), now: F.at(4))
        core.tick(now: F.at(5))
        let changed = core.takeCommands().compactMap(\.published).filter { $0.topicString == topic && $0.kind == .state }
        #expect(changed.map { String(decoding: $0.payload, as: UTF8.self) } == ["1"])
        #expect(runtime.stateReads - reads <= 3, "the new version: read for the update and the selections")
    }

    @Test("a topic longer than 1 KiB is ignored before it is parsed or remembered")
    func longTopic() throws {
        let (core, _) = caughtUpStore()
        _ = core.takeCommands()
        let long = try StatePath(parsing: String(repeating: "k", count: 2_000)).topic(store: "counter")
        core.subscriptionChanged(topic: long, subscribed: true, now: F.at(2))
        #expect(core.takeCommands().compactMap(\.published).isEmpty, "not followed")
        let short = try StatePath(parsing: "count").topic(store: "counter")
        core.subscriptionChanged(topic: short, subscribed: true, now: F.at(2))
        #expect(core.takeCommands().compactMap(\.published).map(\.topicString) == [short], "a short one still is")
    }

    @Test("a peer holding the cap cannot starve a real view: the view's snapshot request claims its refused topic, within its peer's share")
    func claimPastTheCap() throws {
        let (core, _) = caughtUpStore()
        // The hostile peer fills the cap with topics of its own.
        try fillTheCap(core)
        _ = core.takeCommands()
        let real = try StatePath(parsing: "count")
        let topic = real.topic(store: "counter")
        core.subscriptionChanged(topic: topic, subscribed: true, now: F.at(3))
        #expect(core.takeCommands().compactMap(\.published).isEmpty, "refused at the cap")
        // The real view asks for its selection's snapshot, as every view does when it joins.
        core.receivedRequest(Message(topic: topic, header: Header(kind: .snapshotRequest)), from: [42], now: F.at(4))
        #expect(core.takeCommands().compactMap(\.snapshotReply).map(\.message.topicString) == [topic])
        core.receivedFromDispatcher(F.action(1), now: F.at(5))
        core.tick(now: F.at(6))
        let updates = core.takeCommands().compactMap(\.published).filter { $0.topicString == topic && $0.kind == .state }
        #expect(updates.map { String(decoding: $0.payload, as: UTF8.self) } == ["1"], "and its changes are published")

        // One peer's share is 16 claims: a peer asking for every refused topic gets no more.
        for index in 0..<40 {
            let extra = try StatePath(parsing: "x\(index)").topic(store: "counter")
            core.subscriptionChanged(topic: extra, subscribed: true, now: F.at(7))
            core.receivedRequest(Message(topic: extra, header: Header(kind: .snapshotRequest)), from: [7], now: F.at(7))
        }
        _ = core.takeCommands()
        core.tick(now: F.at(60_000))
        let claimed = Set(core.takeCommands().compactMap(\.published).map(\.topicString).filter { $0.hasPrefix("?counter/x") }).count
        #expect(claimed == 16, "\(claimed) claimed")
    }

    @Test("a view whose snapshot request comes before its subscription still claims its topic at the cap")
    func claimWhenTheRequestComesFirst() throws {
        let (core, _) = caughtUpStore()
        try fillTheCap(core)
        _ = core.takeCommands()
        let topic = try StatePath(parsing: "count").topic(store: "counter")
        core.receivedRequest(Message(topic: topic, header: Header(kind: .snapshotRequest)), from: [42], now: F.at(3))
        _ = core.takeCommands()
        core.subscriptionChanged(topic: topic, subscribed: true, now: F.at(4))
        #expect(core.takeCommands().compactMap(\.published).map(\.topicString) == [topic], "claimed when the subscription arrives")
    }
}

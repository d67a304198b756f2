import Dispatcher
import Examples
import FluxCore
import NodeCores
import NodeSupport
import StoreNode
import Testing
import ViewNode

/// The shells' configurations hand their cores rules: the same defaults, and every setting carried over.
@Suite("Configurations make the cores' rules")
struct RulesTests {
    @Test("every default heartbeat, snapshot interval and payload limit is the one the cluster config starts from")
    func oneDefault() throws {
        let heartbeat = Defaults.heartbeatMilliseconds
        #expect(DispatcherRules(apps: []).heartbeatMilliseconds == heartbeat)
        #expect(StoreRules(name: "counter", app: Counter.app()).heartbeatMilliseconds == heartbeat)
        #expect(ViewRules(store: "counter").heartbeatMilliseconds == heartbeat)
        let dispatcher = DispatcherNode.Configuration(intake: "", actions: "", replay: "", apps: [])
        #expect(dispatcher.heartbeatMilliseconds == heartbeat)
        let topology = try Topology.make(transport: .inproc, runDirectory: "rules-defaults", stores: [("counter", "counter")])
        #expect(topology.heartbeatMilliseconds == heartbeat)
        let store = StoreNode.Configuration(topology: topology, store: topology.stores[0], app: Counter.app())
        #expect(store.heartbeatMilliseconds == heartbeat)
        #expect(ViewNode.Configuration(topology: topology, store: topology.stores[0]).heartbeatMilliseconds == heartbeat)

        #expect(StoreRules(name: "counter", app: Counter.app()).snapshotEveryActions == Defaults.snapshotEveryActions)
        #expect(store.snapshotEveryActions == Defaults.snapshotEveryActions)
        #expect(DispatcherRules(apps: []).maxPayloadBytes == Defaults.maxPayloadBytes)
        #expect(dispatcher.maxPayloadBytes == Defaults.maxPayloadBytes)
        #expect(DispatcherRules(apps: []).dedupWindow == Defaults.dedupWindow && dispatcher.dedupWindow == Defaults.dedupWindow)
        let silence = Defaults.silenceTimeoutMilliseconds
        #expect(StoreRules(name: "counter", app: Counter.app()).dispatcherTimeoutMilliseconds == silence)
        #expect(ViewRules(store: "counter").silenceTimeoutMilliseconds == silence && Topology.defaultTimeoutMilliseconds == silence)
        #expect(dispatcher.publishHighWaterMark == SocketDefaults.highWaterMarkMessages)
        #expect(store.highWaterMark == SocketDefaults.highWaterMarkMessages)
    }

    @Test(
        "a replay answer keeps a catching-up store busy between refills: the batches the replay ROUTER queues a peer hold 16k small actions at least"
    )
    func replayWindow() {
        let rules = DispatcherRules(apps: [])
        // Refilled once a dispatcher turn; 2,560 (five batches of 512) lasted a store under 2 ms.
        #expect((ReplayScheduler.queueMessages + 1) * rules.replayBatchSize >= 16_384)
        #expect(rules.replayBatchSize * 64 <= ReplayPlan.maxBatchBytes, "a batch of 64-byte actions closes by count, not by bytes")
    }

    @Test("a dispatcher's configuration: the rules' defaults, then every setting the core reads")
    func dispatcher() {
        var configuration = DispatcherNode.Configuration(intake: "", actions: "", replay: "", apps: [Counter.app()])
        let defaults = DispatcherRules(apps: [])
        var rules = configuration.rules
        #expect(rules.apps.map(\.name) == ["counter"])
        #expect(rules.heartbeatMilliseconds == defaults.heartbeatMilliseconds && rules.dedupWindow == defaults.dedupWindow)
        #expect(rules.replayBatchSize == defaults.replayBatchSize && rules.replayBatchesPerRequest == defaults.replayBatchesPerRequest)
        #expect(rules.clientRate == defaults.clientRate && rules.maxPayloadBytes == defaults.maxPayloadBytes)
        #expect(rules.maxPayloadBytesByType == defaults.maxPayloadBytesByType && rules.journalDescription == "memory")

        configuration.heartbeatMilliseconds = 50
        configuration.replayBatchSize = 7
        configuration.replayBatchesPerRequest = 3
        configuration.dedupWindow = 9
        configuration.clientRate = 100
        configuration.maxPayloadBytes = 1000
        configuration.maxPayloadBytesByType = ["counter.addTapped": 10]
        configuration.journal = .init(directory: "/var/lib/zflux/journal", policy: .always)
        rules = configuration.rules
        #expect(rules.heartbeatMilliseconds == 50 && rules.replayBatchSize == 7 && rules.replayBatchesPerRequest == 3)
        #expect(rules.dedupWindow == 9 && rules.clientRate == 100 && rules.maxPayloadBytes == 1000)
        #expect(rules.maxPayloadBytesByType == ["counter.addTapped": 10])
        #expect(rules.journalDescription == "/var/lib/zflux/journal (fsync always)")
    }

    @Test("a store's configuration: the rules' defaults, then every setting the core reads")
    func store() {
        var configuration = StoreNode.Configuration(
            name: "counter", app: Counter.app(), dispatcherActions: "", dispatcherReplay: "", dispatcherIntake: "", state: "", snapshot: "")
        let defaults = StoreRules(name: "", app: Counter.app())
        var rules = configuration.rules
        #expect(rules.name == "counter" && rules.app.name == "counter")
        #expect(rules.heartbeatMilliseconds == defaults.heartbeatMilliseconds)
        #expect(rules.replayTimeoutMilliseconds == defaults.replayTimeoutMilliseconds)
        #expect(rules.dispatcherTimeoutMilliseconds == defaults.dispatcherTimeoutMilliseconds)
        #expect(defaults.dispatcherTimeoutMilliseconds == Topology.defaultTimeoutMilliseconds)
        #expect(rules.runsEffects == defaults.runsEffects && rules.effectRetryMilliseconds == defaults.effectRetryMilliseconds)
        #expect(rules.writesSnapshots == defaults.writesSnapshots && rules.snapshotEveryActions == defaults.snapshotEveryActions)

        configuration.heartbeatMilliseconds = 50
        configuration.replayTimeoutMilliseconds = 60
        configuration.dispatcherTimeoutMilliseconds = 70
        configuration.runsEffects = false
        configuration.effectRetryMilliseconds = 80
        configuration.snapshotPath = "/tmp/counter.snapshot"
        configuration.snapshotEveryActions = 90
        rules = configuration.rules
        #expect(rules.heartbeatMilliseconds == 50 && rules.replayTimeoutMilliseconds == 60 && rules.dispatcherTimeoutMilliseconds == 70)
        #expect(!rules.runsEffects && rules.effectRetryMilliseconds == 80 && rules.writesSnapshots && rules.snapshotEveryActions == 90)
    }

    @Test("a view's configuration: the rules' defaults, then every setting the core reads")
    func view() throws {
        var configuration = ViewNode.Configuration(store: "counter", state: "", snapshot: "", app: Counter.app())
        let defaults = ViewRules(store: "")
        var rules = configuration.rules
        #expect(rules.store == "counter" && rules.app?.name == "counter" && rules.select == nil && rules.topic == "counter")
        #expect(rules.materializesState == defaults.materializesState && rules.codec == defaults.codec)
        #expect(rules.heartbeatMilliseconds == defaults.heartbeatMilliseconds)
        #expect(rules.silenceTimeoutMilliseconds == defaults.silenceTimeoutMilliseconds)
        #expect(defaults.silenceTimeoutMilliseconds == Topology.defaultTimeoutMilliseconds)

        configuration.select = try StatePath(parsing: "count")
        configuration.materializesState = false
        configuration.codec = .json
        configuration.heartbeatMilliseconds = 50
        configuration.silenceTimeoutMilliseconds = 60
        rules = configuration.rules
        #expect(rules.select == configuration.select && rules.topic == configuration.topic && rules.app == nil)
        #expect(!rules.materializesState && rules.codec == .json && rules.heartbeatMilliseconds == 50 && rules.silenceTimeoutMilliseconds == 60)
    }

    @Test("only a view that neither materializes the state nor has an app tracks versions only")
    func tracksVersionsOnly() {
        var configuration = ViewNode.Configuration(store: "poll", state: "", snapshot: "")
        #expect(!configuration.tracksVersionsOnly, "a view shows states by default")
        configuration.materializesState = false
        #expect(configuration.tracksVersionsOnly && configuration.rules.tracksVersionsOnly)
        configuration.app = UnhostedApp(name: "poll")
        #expect(!configuration.tracksVersionsOnly, "an app's replica applies (or refuses) the changes")
        #expect(!configuration.rules.tracksVersionsOnly)
    }
}

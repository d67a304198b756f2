import Examples
import FluxCore
@_spi(Simulation) import NodeCores
import Testing

@Suite("Dispatcher core: scheduled actions are journaled, fire once when due, and survive a restart")
struct ScheduleCoreTests {
    typealias F = CoreFixtures
    static let second: Int64 = 1_000_000_000

    static func request(
        _ id: String, app: String = "counter", type: String = "incrementTapped", payload: [UInt8] = F.increment, after: Int64? = nil,
        at: Int64? = nil
    ) -> [UInt8] {
        (try? WireCodec().encode(ScheduleRequest(id: id, app: app, type: type, payload: payload, atNanoseconds: at, afterNanoseconds: after))) ?? []
    }

    static func dispatch(
        _ payload: [UInt8], clientSeq: UInt64, type: String = Schedules.scheduleType, ref: UInt64 = 0
    ) -> Result<Message, ProtocolError> {
        .success(
            Message(
                topic: Schedules.topic, header: Header(kind: .dispatch, ref: ref, clientID: 9, clientSeq: clientSeq, actionType: type),
                payload: payload))
    }

    /// Runs a turn at `milliseconds` (the wall clock at the same count of milliseconds), makes what it
    /// appended durable, and returns what it appended.
    @discardableResult
    static func turn(_ core: DispatcherCore, at milliseconds: UInt64, log: MemoryLog? = nil) -> [Message] {
        core.tick(now: F.at(milliseconds))
        core.endOfBurst()
        let appended = core.takeCommands().compactMap(\.appended).flatMap { $0 }
        log?.append(appended)
        core.durable(through: core.head)
        _ = core.takeCommands()
        return appended
    }

    static func send(_ core: DispatcherCore, _ request: Result<Message, ProtocolError>, at milliseconds: UInt64, log: MemoryLog? = nil) -> [Message] {
        core.receivedIntake(request, from: [1], now: F.at(milliseconds))
        core.endOfBurst()
        let commands = core.takeCommands()
        let appended = commands.compactMap(\.appended).flatMap { $0 }
        log?.append(appended)
        core.durable(through: core.head)
        _ = core.takeCommands()
        return appended + commands.compactMap(\.intakeReply).filter { $0.kind == .nack }
    }

    @Test("a schedule is journaled as an action, fires once when due as its app's action flagged scheduled, and never before")
    func firesOnceWhenDue() throws {
        let core = F.makeDispatcher()
        let sent = Self.send(core, Self.dispatch(Self.request("soon", after: 5 * Self.second), clientSeq: 1), at: 1000)
        #expect(sent.map(\.topicString) == [Schedules.topic] && sent.map(\.header.seq) == [1], "the request is sequenced as seq 1")
        #expect(core.nextDeadlineMs <= 6001, "the loop wakes by the due time: \(core.nextDeadlineMs)")
        #expect(Self.turn(core, at: 5999).isEmpty, "not due yet")
        let fired = Self.turn(core, at: 6000)
        let action = try #require(fired.first)
        #expect(fired.count == 1 && action.topicString == "counter" && action.header.actionType == "incrementTapped")
        #expect(action.header.flags.contains(.scheduled) && action.header.seq == 2)
        #expect(Int64(bitPattern: action.header.ref) == 6 * Self.second, "due: the request's stamp plus the delay")
        #expect(action.header.clientSeq == 1 && action.header.clientID == 0, "names its request, and no client")
        #expect(action.payload == F.increment)
        let stamp = Stamp(action.header)
        #expect(stamp.schedule?.requestSeq == 1 && stamp.lateness == .zero && !stamp.isLate)
        #expect(Self.turn(core, at: 60_000).isEmpty, "fired once")
        #expect(core.schedules.fired == 1 && core.schedules.isEmpty)
    }

    @Test("a second request with the same id replaces the first; a cancel removes it; ids are each app's own")
    func replaceAndCancel() {
        let core = F.makeDispatcher(apps: [Counter.app(), Star.app()])
        _ = Self.send(core, Self.dispatch(Self.request("x", after: 1 * Self.second), clientSeq: 1), at: 0)
        _ = Self.send(core, Self.dispatch(Self.request("x", after: 3 * Self.second), clientSeq: 2), at: 0)
        let starPayload = (try? Star.app().wirePayload(type: "starTapped", argumentsJSON: [])) ?? []
        _ = Self.send(
            core, Self.dispatch(Self.request("x", app: "star", type: "starTapped", payload: starPayload, after: 2 * Self.second), clientSeq: 3), at: 0
        )
        #expect(core.schedules.count == 2)
        #expect(Self.turn(core, at: 1500).isEmpty, "the first was replaced")
        #expect(Self.turn(core, at: 2000).map(\.topicString) == ["star"], "the other app's x is its own")
        #expect(Self.turn(core, at: 3000).map(\.header.clientSeq) == [2], "the replacement fires, naming its own request")

        _ = Self.send(core, Self.dispatch(Self.request("y", after: 1 * Self.second), clientSeq: 4), at: 4000)
        let cancel = (try? WireCodec().encode(ScheduleCancel(app: "counter", id: "y"))) ?? []
        let cancelled = Self.send(core, Self.dispatch(cancel, clientSeq: 5, type: Schedules.cancelType), at: 4500)
        #expect(cancelled.map(\.topicString) == [Schedules.topic], "a cancel is journaled too")
        #expect(Self.turn(core, at: 10_000).isEmpty && core.schedules.cancelled == 1)

        // `zflux dispatch zflux.schedule cancel '{"app":…,"id":…}'` wraps the arguments in the type's name.
        _ = Self.send(core, Self.dispatch(Self.request("z", after: 1 * Self.second), clientSeq: 6), at: 11_000)
        let wrapped = Array(#"{"cancel":{"app":"counter","id":"z"}}"#.utf8)
        let journaled = Self.send(core, Self.dispatch(wrapped, clientSeq: 7, type: Schedules.cancelType), at: 11_500)
        #expect(journaled.map(\.kind) == [.action] && core.schedules.isEmpty)
        #expect((try? WireCodec().decode(ScheduleCancel.self, from: journaled.first?.payload ?? [])) == ScheduleCancel(app: "counter", id: "z"))
    }

    @Test(
        "refused with a reason, nothing journaled: an unknown app, an invalid action, no time or two, a delay past ten years, an effect's action from a client, a cancel's unknown app"
    )
    func refusals() {
        var rules = DispatcherRules(apps: [Counter.app(), Todo.app(), Login.app()])
        rules.effectToken = 77
        let core = DispatcherCore(rules: rules, head: 0, history: F.history, now: F.at(0), logger: F.logger)
        let shortTitle = (try? WireCodec().encode(Todo.Action.addTodo(title: "ab"))) ?? []
        let expired = (try? Login.app().wirePayload(type: "sessionExpired", argumentsJSON: [])) ?? []
        let cases: [(Result<Message, ProtocolError>, String)] = [
            (Self.dispatch(Self.request("a", app: "nope", after: 1), clientSeq: 1), "unknown app 'nope'"),
            (Self.dispatch(Self.request("a", app: "todo", type: "addTodo", payload: shortTitle, after: 1), clientSeq: 2), "at least 3 characters"),
            (Self.dispatch(Self.request("a"), clientSeq: 3), "one of them"),
            (Self.dispatch(Self.request("a", after: 1, at: 1), clientSeq: 4), "one of them"),
            (Self.dispatch(Self.request("a", after: -1), clientSeq: 5), "a delay is 0 to ten years"),
            (Self.dispatch(Self.request("a", after: Schedules.maxDelayNanoseconds + 1), clientSeq: 6), "a delay is 0 to ten years"),
            (Self.dispatch(Self.request("", after: 1), clientSeq: 7), "a schedule id is 1 to"),
            (Self.dispatch(Self.request("a", app: "login", type: "sessionExpired", payload: expired, after: 1), clientSeq: 8), "effects only"),
            (
                Self.dispatch((try? WireCodec().encode(ScheduleCancel(app: "nope", id: "a"))) ?? [], clientSeq: 9, type: Schedules.cancelType),
                "unknown app"
            ),
            (Self.dispatch(Self.request("a", after: 1), clientSeq: 10, type: "later"), "takes schedule and cancel"),
            (Self.dispatch(Array("not a request".utf8), clientSeq: 11), "a schedule's payload is"),
        ]
        for (request, reason) in cases {
            let answer = Self.send(core, request, at: 0)
            #expect(answer.map(\.kind) == [.nack], "\(reason): \(answer)")
            let text = answer.first.map { String(decoding: $0.payload, as: UTF8.self) } ?? ""
            #expect(text.contains(reason), "\(text)")
        }
        #expect(core.head == 0 && core.schedules.isEmpty)
        // The same effect's action with the token is taken.
        let taken = Self.send(
            core, Self.dispatch(Self.request("a", app: "login", type: "sessionExpired", payload: expired, after: 1), clientSeq: 12, ref: 77), at: 0)
        #expect(taken.map(\.kind) == [.action] && core.schedules.count == 1)
    }

    @Test("a restarted dispatcher rebuilds its schedules from the log: pending ones fire once, late and in due order; fired ones never again")
    func survivesRestart() throws {
        let log = MemoryLog(history: F.history)
        let core = F.makeDispatcher()
        _ = Self.send(core, Self.dispatch(Self.request("b", after: 20 * Self.second), clientSeq: 1), at: 0, log: log)
        _ = Self.send(core, Self.dispatch(Self.request("a", after: 10 * Self.second), clientSeq: 2), at: 0, log: log)
        _ = Self.send(core, Self.dispatch(Self.request("done", after: 1 * Self.second), clientSeq: 3), at: 0, log: log)
        #expect(Self.turn(core, at: 1000, log: log).map(\.header.clientSeq) == [3])
        // The dispatcher stops, and starts 60 s later from its log.
        let restarted = try DispatcherBoot.core(rules: DispatcherRules(apps: [Counter.app()]), log: log, now: F.at(61_000), logger: F.logger)
        #expect(restarted.schedules.count == 2 && restarted.schedules.fired == 1)
        let fired = Self.turn(restarted, at: 61_000, log: log)
        #expect(fired.map(\.header.clientSeq) == [2, 1], "late ones fire at start, in due order, not the one fired before the stop")
        #expect(fired.allSatisfy { Stamp($0.header).isLate }, "and say they are late")
        #expect(Stamp(try #require(fired.first).header).lateness == .seconds(51))
        #expect(restarted.schedules.late == 2 && restarted.schedules.fired == 3)
        let again = try DispatcherBoot.core(rules: DispatcherRules(apps: [Counter.app()]), log: log, now: F.at(62_000), logger: F.logger)
        #expect(again.schedules.isEmpty && Self.turn(again, at: 100_000).isEmpty, "nothing fires twice")
        // The canary forgets what fired, and fires it all again: what the simulator must catch.
        try again.rebuildSchedules(from: log, forgettingFires: true)
        #expect(Self.turn(again, at: 100_000).count == 3)
    }

    @Test("only a leader that can write its journal fires: not one stepped down, not one whose journal fails")
    func onlyALeaderFires() {
        let core = F.makeDispatcher()
        _ = Self.send(core, Self.dispatch(Self.request("a", after: 1), clientSeq: 1), at: 0)
        core.journalUnwritable("disk full")
        #expect(Self.turn(core, at: 1000).isEmpty)
        core.journalUnwritable(nil)
        core.leaseExpired()
        #expect(Self.turn(core, at: 2000).isEmpty && core.schedules.count == 1)
    }
}

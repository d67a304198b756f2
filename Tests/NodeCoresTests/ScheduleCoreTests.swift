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
        #expect(core.nextDeadlineMs(now: F.at(5000)) <= 6001, "the loop wakes by the due time: \(core.nextDeadlineMs(now: F.at(5000)))")
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

@Suite("Dispatcher core: schedules against hostile requests and large books")
struct ScheduleBoundsTests {
    typealias F = CoreFixtures
    typealias S = ScheduleCoreTests
    static let second = ScheduleCoreTests.second

    @Test("a time before 1970 is refused; a book holding one fires it without trapping (its lateness overflows)")
    func beforeTheEpoch() {
        let core = F.makeDispatcher()
        let answer = S.send(core, S.dispatch(S.request("old", at: -9_000_000_000_000_000_000), clientSeq: 1), at: 0)
        #expect(answer.map(\.kind) == [.nack] && core.schedules.isEmpty)
        var book = ScheduleBook()
        book.add(.init(id: "x", app: "counter", actionType: "incrementTapped", payload: [], dueNanoseconds: .min, requestSeq: 1))
        let wasPending = book.fired(requestSeq: 1, at: .max)
        #expect(wasPending && book.late == 0)
    }

    @Test("the pending schedules' payloads are bounded: past the budget a request is refused, a replacement frees what it replaces")
    func payloadBudget() {
        var rules = DispatcherRules(apps: [Ledger.app()])
        rules.maxPendingScheduleBytes = 9 << 20  // 64 MiB by default: this test's is smaller, so it runs fast
        rules.effectToken = 77
        let core = DispatcherCore(rules: rules, head: 0, history: F.history, now: F.at(0), logger: F.logger)
        let memo = String(repeating: "m", count: (1 << 20) - 2048)  // within ledger.post's own 1 MiB
        let post = (try? WireCodec().encode(Ledger.Action.post(account: 1, amount: 1, memo: memo))) ?? []
        var taken = 0
        for index in 0..<10 {
            let request = S.request("big-\(index)", app: "ledger", type: "post", payload: post, after: 3600 * S.second)
            let answer = S.send(core, S.dispatch(request, clientSeq: UInt64(index + 1)), at: 0)
            if answer.map(\.kind) == [.action] {
                taken += 1
            } else {
                let reason = String(decoding: answer.first?.payload ?? [], as: UTF8.self)
                #expect(reason.contains("9 MiB of payloads"), "\(reason)")
            }
        }
        // Clients fill nine tenths: the rest is kept for the app's effects.
        #expect(taken == 8 && core.schedules.pendingBytes <= rules.maxPendingScheduleBytes, "\(taken) taken")
        let byEffect = S.request("effect", app: "ledger", type: "post", payload: post, after: 3600 * S.second)
        #expect(S.send(core, S.dispatch(byEffect, clientSeq: 50, ref: 77), at: 0).map(\.kind) == [.action], "an effect's schedule still fits")
        let again = S.request("big-0", app: "ledger", type: "post", payload: post, after: 60 * S.second)
        #expect(S.send(core, S.dispatch(again, clientSeq: 100), at: 0).map(\.kind) == [.action], "a replacement fits")
    }

    @Test("a client without the effect token cannot cancel or replace a schedule of an effect-only action; an effect can")
    func effectsOwnTheirSchedules() {
        var rules = DispatcherRules(apps: [Login.app()])
        rules.effectToken = 77
        let core = DispatcherCore(rules: rules, head: 0, history: F.history, now: F.at(0), logger: F.logger)
        let expired = (try? Login.app().wirePayload(type: "sessionExpired", argumentsJSON: [])) ?? []
        let typed = (try? Login.app().wirePayload(type: "usernameChanged", argumentsJSON: Array(#"{"username":"m"}"#.utf8))) ?? []
        let made = S.send(
            core, S.dispatch(S.request("session", app: "login", type: "sessionExpired", payload: expired, after: S.second), clientSeq: 1, ref: 77),
            at: 0)
        #expect(made.map(\.kind) == [.action])
        let cancel = (try? WireCodec().encode(ScheduleCancel(app: "login", id: "session"))) ?? []
        let refused = [
            S.send(core, S.dispatch(cancel, clientSeq: 2, type: Schedules.cancelType), at: 0),
            S.send(
                core, S.dispatch(S.request("session", app: "login", type: "usernameChanged", payload: typed, after: 3600 * S.second), clientSeq: 3),
                at: 0),
        ]
        for answer in refused {
            #expect(answer.map(\.kind) == [.nack])
            let reason = String(decoding: answer.first?.payload ?? [], as: UTF8.self)
            #expect(reason.contains("a client cannot cancel or replace it"), "\(reason)")
        }
        #expect(core.schedules.entry(app: "login", id: "session")?.actionType == "sessionExpired")
        #expect(S.send(core, S.dispatch(cancel, clientSeq: 4, type: Schedules.cancelType, ref: 77), at: 0).map(\.kind) == [.action])
        #expect(core.schedules.isEmpty)
    }

    @Test(
        "a client without the effect token cannot cancel or replace an effect's schedule of any action; another client's it can; the journal says which is which"
    )
    func effectsScheduleOfAnyAction() throws {
        var rules = DispatcherRules(apps: [Login.app()])
        rules.effectToken = 77
        let log = MemoryLog(history: F.history, clientScope: ClientScope(k0: 1, k1: 2))
        let core = DispatcherCore(rules: rules, head: 0, history: F.history, now: F.at(0), logger: F.logger)
        let typed = (try? Login.app().wirePayload(type: "usernameChanged", argumentsJSON: Array(#"{"username":"m"}"#.utf8))) ?? []
        let byEffect = S.request("reminder", app: "login", type: "usernameChanged", payload: typed, after: 3600 * S.second)
        let byClient = S.request("note", app: "login", type: "usernameChanged", payload: typed, after: 3600 * S.second)
        #expect(S.send(core, S.dispatch(byEffect, clientSeq: 1, ref: 77), at: 0, log: log).map(\.kind) == [.action])
        #expect(S.send(core, S.dispatch(byClient, clientSeq: 2), at: 0, log: log).map(\.kind) == [.action])
        func cancel(_ id: String, clientSeq: UInt64, ref: UInt64 = 0) -> [MessageKind] {
            let payload = (try? WireCodec().encode(ScheduleCancel(app: "login", id: id))) ?? []
            return S.send(core, S.dispatch(payload, clientSeq: clientSeq, type: Schedules.cancelType, ref: ref), at: 0, log: log).map(\.kind)
        }
        let again = S.request("reminder", app: "login", type: "usernameChanged", payload: typed, after: S.second)
        let replaced = S.send(core, S.dispatch(again, clientSeq: 3), at: 0, log: log)
        #expect(replaced.map(\.kind) == [.nack])
        let reason = String(decoding: replaced.first?.payload ?? [], as: UTF8.self)
        #expect(reason.contains("made by the app's effects"), "\(reason)")
        #expect(cancel("reminder", clientSeq: 4) == [.nack], "a client cannot call off an effect's schedule")
        // Rebuilt from the journal, the book knows which schedule an effect made.
        try core.rebuildSchedules(from: log)
        #expect(core.schedules.entry(app: "login", id: "reminder")?.byEffect == true)
        #expect(core.schedules.entry(app: "login", id: "note")?.byEffect == false)
        #expect(cancel("reminder", clientSeq: 5) == [.nack])
        #expect(cancel("note", clientSeq: 6) == [.action], "a client's schedule any client may cancel")
        #expect(cancel("reminder", clientSeq: 7, ref: 77) == [.action], "the effects may")
        #expect(core.schedules.isEmpty)
    }

    @Test("a STATUS lists the first pending schedules as the book holds them now: read once per change to it, never stale")
    func statusListsTheBookAsItIs() throws {
        let core = F.makeDispatcher()
        func listed() -> [String] { core.status(now: F.at(0), pid: 1, subscribers: 0, journalBytes: 0).schedules?.map(\.id) ?? [] }
        for (index, id) in ["c", "a", "b"].enumerated() {
            let after = Int64(10 - index) * S.second
            #expect(S.send(core, S.dispatch(S.request(id, after: after), clientSeq: UInt64(index + 1)), at: 0).map(\.kind) == [.action])
        }
        #expect(listed() == ["b", "a", "c"])
        #expect(listed() == ["b", "a", "c"], "asked again, unchanged")
        let cancel = (try? WireCodec().encode(ScheduleCancel(app: "counter", id: "a"))) ?? []
        #expect(S.send(core, S.dispatch(cancel, clientSeq: 4, type: Schedules.cancelType), at: 0).map(\.kind) == [.action])
        #expect(listed() == ["b", "c"])
        S.turn(core, at: 8_000)
        #expect(listed() == ["c"], "b fired")
    }

    @Test("a journal's request the intake would refuse is skipped when the book is rebuilt")
    func rebuildSkipsWhatTheIntakeRefuses() {
        var book = ScheduleBook()
        let long = String(repeating: "t", count: 300)
        for (seq, request) in [
            ScheduleRequest(id: "a", app: "counter", type: long, payload: [], afterNanoseconds: 1),
            ScheduleRequest(id: "", app: "counter", type: "incrementTapped", payload: [], afterNanoseconds: 1),
            ScheduleRequest(id: "b", app: "../x", type: "incrementTapped", payload: [], afterNanoseconds: 1),
            ScheduleRequest(id: "c", app: "counter", type: "incrementTapped", payload: [], atNanoseconds: -5),
            ScheduleRequest(id: "d", app: "counter", type: "incrementTapped", payload: [], afterNanoseconds: 1),
        ].enumerated() {
            let header = Header(kind: .action, seq: UInt64(seq + 1), timestamp: 10, actionType: Schedules.scheduleType)
            book.note(Array(Schedules.topic.utf8), header: header, payload: (try? WireCodec().encode(request)) ?? [])
        }
        #expect(book.pending().map(\.id) == ["d"])
    }

    @Test("a large book under replacements and cancels fires in due order, each once: as a plain sorted model does")
    func heapAgreesWithAModel() {
        var book = ScheduleBook()
        var model: [String: (due: Int64, seq: UInt64)] = [:]
        var random = SystemRandomNumberGenerator()
        var seq: UInt64 = 0
        for _ in 0..<20_000 {
            seq += 1
            let id = "s\(Int.random(in: 0..<3000, using: &random))"
            if Int.random(in: 0..<5, using: &random) == 0 {
                let was = book.cancel(app: "counter", id: id)
                #expect(was == (model.removeValue(forKey: id) != nil))
            } else {
                let due = Int64.random(in: 0..<1_000_000, using: &random)
                book.add(.init(id: id, app: "counter", actionType: "incrementTapped", payload: [1], dueNanoseconds: due, requestSeq: seq))
                model[id] = (due, seq)
            }
        }
        #expect(book.count == model.count && book.pendingBytes == model.count)
        let expected = model.sorted { ($0.value.due, $0.value.seq) < ($1.value.due, $1.value.seq) }.map(\.key)
        #expect(book.pending().map(\.id) == expected)
        for limit in [0, 1, 2, 7, 100, 1023] {
            #expect(book.pending(limit: limit).map(\.id) == Array(expected.prefix(limit)), "the first \(limit), off the heap's top")
        }
        var fired: [String] = []
        while let next = book.next {
            #expect(book.nextDue == next.dueNanoseconds)
            fired.append(next.id)
            let wasPending = book.fired(requestSeq: next.requestSeq, at: next.dueNanoseconds)
            #expect(wasPending)
        }
        #expect(fired == expected && book.isEmpty && book.nextDue == nil && book.pendingBytes == 0)
    }
}

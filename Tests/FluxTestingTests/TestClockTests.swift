import FluxCore
import FluxTesting
import Foundation
import Testing

/// An auction that closes itself by a schedule, with an effect that sleeps on the environment's clock.
enum Auction {
    struct State: Codable, Equatable, Sendable {
        var isOpen = false
        var bids: [Int] = []
        /// What the closing action's stamp said: when it was due, when it came, and whether it was late.
        var closedDue: Date?
        var closedAt: Date?
        var closedLate = false
        var reminded = false
    }

    enum Action: Codable, Equatable, Sendable {
        case open(seconds: Int)  // schedules .closed
        case openUntil(Date)  // schedules .closed at a time
        case extend(seconds: Int)  // replaces the schedule
        case keepOpen  // cancels it
        case bid(Int)
        case closed
        case remindLater  // an effect sleeps 30 s on the clock, then sends .reminded
        case reminded
    }

    struct Environment: Sendable { var clock: EffectClock }

    static let reducer = Reducer<State, Action, Environment> { state, action, environment, stamp in
        switch action {
        case .open(let seconds):
            state.isOpen = true
            return .schedule(.closed, after: .seconds(seconds), id: "close")
        case .openUntil(let date):
            state.isOpen = true
            return .schedule(.closed, at: date, id: "close")
        case .extend(let seconds):
            return .schedule(.closed, after: .seconds(seconds), id: "close")
        case .keepOpen:
            return .cancelSchedule(id: "close")
        case .bid(let amount):
            if state.isOpen { state.bids.append(amount) }
            return .none
        case .closed:
            state.isOpen = false
            state.closedDue = stamp.schedule?.due
            state.closedAt = stamp.time
            state.closedLate = stamp.isLate
            return .none
        case .remindLater:
            return .run { send in
                do {
                    try await environment.clock.sleep(.seconds(30))
                    send(.reminded)
                } catch {}
            }
        case .reminded:
            state.reminded = true
            return .none
        }
    }
}

typealias AuctionStore = TestStore<Auction.State, Auction.Action, Auction.Environment>

func auctionStore(_ log: FailureLog, clock: TestClock?) -> AuctionStore {
    AuctionStore(
        initialState: Auction.State(), reducer: Auction.reducer,
        environment: Auction.Environment(clock: clock?.effectClock ?? .mock()), timeout: .seconds(300), clock: clock,
        reportFailure: { message, location in log.reporter(message, location) })
}

@Suite("TestClock drives a TestStore's schedules and its effects' sleeps", .timeLimit(.minutes(10)))
struct TestClockTests {
    let start = Date(timeIntervalSince1970: 1_767_225_600)

    @Test("a scheduled action fires only once the clock passes its due time, stamped with it")
    func firesAfterAdvance() async {
        let log = FailureLog()
        let clock = TestClock()
        let store = auctionStore(log, clock: clock)
        await store.send(.open(seconds: 60)) { $0.isOpen = true }
        clock.advance(by: .seconds(59))
        await store.send(.bid(5)) { $0.bids = [5] }  // nothing was received in between: it has not fired
        #expect(store.pendingSchedules == ["close": start + 60])
        clock.advance(by: .seconds(1))
        await store.receive(.closed) {
            $0.isOpen = false
            $0.closedDue = self.start + 60
            $0.closedAt = self.start + 60
        }
        await store.send(.bid(7))  // refused by the reducer: the auction is closed
        #expect(store.pendingSchedules.isEmpty)
        await store.finish()
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("a TestStore's time is its clock's: advancing the clock moves it, and setting it advances the clock, never backwards")
    func timeFollowsClock() async {
        let log = FailureLog()
        let clock = TestClock()
        let store = auctionStore(log, clock: clock)
        #expect(store.time == start && clock.now == start)
        clock.advance(by: .seconds(90))
        #expect(store.time == start + 90)
        await store.send(.open(seconds: 60)) { $0.isOpen = true }
        store.time = start + 150
        #expect(clock.now == start + 150, "setting the store's time advanced the clock, firing the schedule due at start + 150")
        await store.receive(.closed) {
            $0.isOpen = false
            $0.closedDue = self.start + 150
            $0.closedAt = self.start + 150
        }
        store.time = start
        #expect(store.time == start + 150 && clock.now == start + 150, "an earlier time does nothing")
        await store.finish()
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("a schedule at a date fires then")
    func firesAtDate() async {
        let log = FailureLog()
        let clock = TestClock()
        let store = auctionStore(log, clock: clock)
        await store.send(.openUntil(start + 3600)) { $0.isOpen = true }
        clock.advance(to: start + 3599)
        #expect(store.pendingSchedules == ["close": start + 3600])
        clock.run()
        #expect(clock.now == start + 3600)
        await store.receive(.closed) {
            $0.isOpen = false
            $0.closedDue = self.start + 3600
            $0.closedAt = self.start + 3600
        }
        await store.finish()
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("a cancelled schedule never fires")
    func cancel() async {
        let log = FailureLog()
        let clock = TestClock()
        let store = auctionStore(log, clock: clock)
        await store.send(.open(seconds: 60)) { $0.isOpen = true }
        await store.send(.keepOpen)
        // The cancel is an effect's order: wait for it to be taken rather than guess how long it takes.
        let deadline = ContinuousClock.now + .seconds(300)
        while !store.pendingSchedules.isEmpty && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(store.pendingSchedules.isEmpty)
        clock.advance(by: .seconds(3600))
        await store.send(.bid(1)) { $0.bids = [1] }
        await store.finish()
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("a schedule with the same id replaces the pending one, its delay counted from the action that asked")
    func replace() async {
        let log = FailureLog()
        let clock = TestClock()
        let store = auctionStore(log, clock: clock)
        await store.send(.open(seconds: 60)) { $0.isOpen = true }
        clock.advance(by: .seconds(30))
        await store.send(.extend(seconds: 60))
        let deadline = ContinuousClock.now + .seconds(300)
        while store.pendingSchedules["close"] != start + 90 && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(store.pendingSchedules == ["close": start + 90])
        clock.advance(by: .seconds(59))  // past the first due time: nothing fires
        await store.send(.bid(2)) { $0.bids = [2] }
        clock.advance(by: .seconds(1))
        await store.receive(.closed) {
            $0.isOpen = false
            $0.closedDue = self.start + 90
            $0.closedAt = self.start + 90
        }
        await store.finish()
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("a schedule fires at its deadline however far the clock goes past it; advanced while down, it fires late")
    func lateness() async {
        let log = FailureLog()
        let clock = TestClock()
        let store = auctionStore(log, clock: clock)
        await store.send(.open(seconds: 60)) { $0.isOpen = true }
        // A running cluster fires it when it comes due, however far the test then moves the clock.
        clock.advance(by: .seconds(3600))
        await store.receive(.closed) {
            $0.isOpen = false
            $0.closedDue = self.start + 60
            $0.closedAt = self.start + 60
        }
        // As if the cluster were down for an hour when the schedule came due: it fires when it is up again.
        await store.send(.open(seconds: 60)) { $0.isOpen = true }
        clock.advanceWhileDown(by: .seconds(3600))
        await store.receive(.closed) {
            $0.isOpen = false
            $0.closedDue = self.start + 3660
            $0.closedAt = self.start + 7200
            $0.closedLate = true
        }
        await store.finish()
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("a schedule still pending fails finish; without a clock it never fires")
    func pendingAtFinish() async {
        for clock in [TestClock(), nil] {
            let log = FailureLog()
            let store = auctionStore(log, clock: clock)
            await store.send(.open(seconds: 60)) { $0.isOpen = true }
            await store.receive(.closed, timeout: .milliseconds(50))
            await store.finish()
            #expect(log.all.count == 2, "\(log.all)")
            #expect(log.all.first?.contains("no action arrived") == true, "\(log.all)")
            #expect(log.all.first?.contains("1 schedule(s) pending, the first 'close'") == true, "\(log.all)")
            #expect(log.all.last?.contains("1 schedule(s) still pending at the end of the test: 'close'") == true, "\(log.all)")
            #expect(store.pendingSchedules.isEmpty, "finish forgets them")
            // The clock fires nothing into a finished store.
            clock?.run()
            #expect(clock?.pending ?? 0 == 0)
        }
    }

    @Test("non-exhaustive: pending schedules at finish are dropped")
    func nonExhaustivePending() async {
        let log = FailureLog()
        let clock = TestClock()
        let store = AuctionStore(
            initialState: Auction.State(), reducer: Auction.reducer, environment: Auction.Environment(clock: clock.effectClock),
            exhaustivity: .off, clock: clock, reportFailure: { message, location in log.reporter(message, location) })
        await store.send(.open(seconds: 60)) { $0.isOpen = true }
        await store.finish()
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("an effect sleeping on the clock goes on only when the clock reaches its deadline")
    func sleepingEffect() async {
        let log = FailureLog()
        let clock = TestClock()
        let store = auctionStore(log, clock: clock)
        await store.send(.remindLater)
        let deadline = ContinuousClock.now + .seconds(300)
        while clock.pending == 0 && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(clock.pending == 1, "the effect sleeps on the clock")
        clock.advance(by: .seconds(29))
        #expect(clock.pending == 1, "29 s is not enough")
        clock.advance(by: .seconds(1))
        await store.receive(.reminded) { $0.reminded = true }
        await store.finish()
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("a sleep is cancelled with its task, and deadlines fire in order")
    func sleepCancelAndOrder() async throws {
        let clock = TestClock()
        let order = Locked<[Int]>([])
        let sleeper = Task { () -> String in
            do {
                try await clock.sleep(for: .seconds(10))
                return "woke"
            } catch {
                return error is CancellationError ? "cancelled" : "\(error)"
            }
        }
        let deadline = ContinuousClock.now + .seconds(300)
        while clock.pending == 0 && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        sleeper.cancel()
        #expect(await sleeper.value == "cancelled")
        #expect(clock.pending == 0)

        let effectClock = clock.effectClock
        let tasks = [3, 1, 2].map { seconds in
            Task {
                try await effectClock.sleep(.seconds(seconds))
            }
        }
        let started = ContinuousClock.now + .seconds(300)
        while clock.pending < 3 && ContinuousClock.now < started { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(clock.pending == 3)
        // Timers (what a TestStore's schedules are) fire on the advancing thread, so their order shows.
        for seconds in [2, 1, 2, 3] { clock.setTimer(at: start + Double(seconds)) { order.withLock { $0.append(seconds) } } }
        clock.setTimer(at: start + 1) { order.withLock { $0.append(0) } }  // same time as another: after it
        clock.run()
        #expect(order.withLock { $0 } == [1, 0, 2, 2, 3])
        #expect(clock.now == start + 3)
        #expect(effectClock.now() == start + 3)
        for task in tasks { try await task.value }  // every sleeper woke
        clock.advance(to: start)  // never backwards
        #expect(clock.now == start + 3)
    }
}

import FluxCore
import Foundation
import Testing

/// A store for tests, in the spirit of TCA's `TestStore`: feed it actions, say how the state must change,
/// and say which actions its effects must send back.
///
/// Exhaustive by default: a state change you did not assert, an action an effect sent that you did not
/// `receive`, or an effect still running at `finish()` fails the test, with the action named and a diff
/// of expected and actual state (`−` expected, `+` actual).
///
/// ```swift
/// let store = TestStore(initialState: Todo.State(), reducer: Todo.reducer,
///                       environment: .mock(.success([Todo.Item(title: "Saved")])))
/// await store.send(.loadTapped) { $0.isLoading = true }
/// await store.receive(.todosLoaded(todos: [Todo.Item(title: "Saved")])) {
///     $0.isLoading = false
///     $0.todos = [Todo.Item(title: "Saved")]
/// }
/// await store.finish()
/// ```
///
/// As in a real store, actions sent by effects are applied only when they are received: in a cluster
/// they go through the dispatcher and come back as new, later actions.
///
/// Scheduled actions (`Effect.schedule`) fire by a ``TestClock`` given as `clock`: once the test advances
/// it past a schedule's due time, its action waits to be received like an effect's, and is applied with
/// a stamp whose `schedule` says when it was due and whose `time` is the clock's. Without a clock they
/// never fire: a test of a delay must say when time passes, never have it pass unseen. Schedules still
/// pending at `finish()` fail an exhaustive test, as running effects do; cancel them, or advance the
/// clock and receive their actions.
public final class TestStore<State, Action, Environment>
where State: Codable & Equatable & Sendable, Action: Equatable & Sendable, Environment: Sendable {
    public enum Exhaustivity: Sendable {
        /// Every change and every received action must be asserted.
        case on
        /// Assert only what you care about: asserted fields are checked, other changes are allowed,
        /// received actions you skip are allowed, and effects still running at the end are cancelled.
        case off
    }

    /// A failure, reported through this closure. The default records a Swift Testing issue; a test of
    /// `TestStore` itself (or an XCTest suite) can pass its own.
    public typealias FailureReporter = @Sendable (_ message: String, _ location: SourceLocation) -> Void

    public private(set) var state: State
    public var environment: Environment
    public var exhaustivity: Exhaustivity
    /// How long `receive` waits for an effect's action.
    public var timeout: Duration
    /// The time stamped on the actions this store applies next, as the dispatcher would stamp it: what a
    /// reducer reads as `stamp.time`. Fixed unless the test moves it (2026-01-01T00:00:00Z to start); with
    /// a ``clock``, the clock's time, and setting it advances the clock (firing what falls due).
    public var time: Date {
        get { clock?.now ?? fixedTime }
        set {
            if let clock { clock.advance(to: newValue) } else { fixedTime = newValue }
        }
    }
    private var fixedTime = Date(timeIntervalSince1970: 1_767_225_600)
    /// The clock scheduled actions fire by (nil: they never fire).
    package let clock: TestClock?
    /// The seq of the last action applied (each `send` or `receive` stamps the next one).
    public private(set) var seq: UInt64 = 0

    private let reducer: Reducer<State, Action, Environment>
    /// The app's state-dependent refusal (`FluxApp.reject`): a refused action changes nothing.
    private let reject: @Sendable (State, Action) -> String?
    private let inbox = Inbox<Action>()
    private let schedules: TestSchedules<Action>
    private let effects: EffectRunner<Action>
    private let reportFailure: FailureReporter
    private var finished = false

    public init(
        initialState: State,
        reducer: Reducer<State, Action, Environment>,
        environment: Environment,
        exhaustivity: Exhaustivity = .on,
        timeout: Duration = .seconds(2),
        clock: TestClock? = nil,
        reject: @escaping @Sendable (State, Action) -> String? = { _, _ in nil },
        reportFailure: @escaping FailureReporter = { message, location in
            Issue.record(Comment(rawValue: message), sourceLocation: location)
        }
    ) {
        self.state = initialState
        self.reducer = reducer
        self.reject = reject
        self.environment = environment
        self.exhaustivity = exhaustivity
        self.timeout = timeout
        self.reportFailure = reportFailure
        self.clock = clock
        let inbox = inbox
        let schedules = TestSchedules(clock: clock, inbox: inbox)
        self.schedules = schedules
        self.effects = EffectRunner(send: Send { inbox.append($0) })
    }

    /// Builds a test store from an app definition; `environment` replaces the app's own.
    public convenience init(
        _ app: FluxApp<State, Action, Environment>, environment: Environment? = nil, exhaustivity: Exhaustivity = .on,
        clock: TestClock? = nil, reportFailure: FailureReporter? = nil
    ) where Action: Codable {
        if let reportFailure {
            self.init(
                initialState: app.initialState, reducer: app.reducer, environment: environment ?? app.environment,
                exhaustivity: exhaustivity, clock: clock, reject: app.reject, reportFailure: reportFailure)
        } else {
            self.init(
                initialState: app.initialState, reducer: app.reducer, environment: environment ?? app.environment,
                exhaustivity: exhaustivity, clock: clock, reject: app.reject)
        }
    }

    /// Sends an action and checks the state change: `assert` turns the state before into the expected
    /// state after. Without `assert`, the action must not change the state (in exhaustive mode).
    public func send(
        _ action: Action, assert: ((inout State) throws -> Void)? = nil,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async {
        let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        if exhaustivity == .on, let pending = inbox.first {
            fail(
                "sent \(describe(action)) while \(inbox.count) received action(s) were not yet asserted, the first: \(describe(pending.action))",
                location)
        }
        if let reason = reject(state, action) {
            fail("the app rejected \(describe(action)): \(reason)", location)
            return
        }
        let running = effects.inFlight
        apply(action, verb: "send", assert: assert, location: location)
        await letEffectsStart(running)
    }

    /// Sends an action the app must reject in the current state with `reason`; the state must not change.
    public func send(
        _ action: Action, rejectedWith reason: String,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async {
        let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let actual = reject(state, action) else {
            fail("expected the app to reject \(describe(action)) with '\(reason)', but it accepted it", location)
            apply(action, verb: "send", assert: nil, location: location, check: false)
            return
        }
        if actual != reason { fail("\(describe(action)) was rejected with '\(actual)', not '\(reason)'", location) }
    }

    /// Waits for the next action an effect sent, checks it is `expected`, applies it and checks the state
    /// change as `send` does. With exhaustivity off, earlier non-matching actions are skipped.
    public func receive(
        _ expected: Action, timeout: Duration? = nil, assert: ((inout State) throws -> Void)? = nil,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async {
        let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let deadline = ContinuousClock.now + (timeout ?? self.timeout)
        var schedule: Stamp.Schedule?
        var firedAt: Date?
        while true {
            if let (next, due, fired) = inbox.popFirst() {
                if next == expected {
                    if let reason = reject(state, next) {
                        fail("the app rejected the received \(describe(next)): \(reason)", location)
                        return
                    }
                    schedule = due
                    firedAt = fired
                    break
                }
                if exhaustivity == .off {
                    apply(next, schedule: due, firedAt: fired, verb: "skip", assert: nil, location: location, check: false)
                    continue
                }
                fail("expected to receive \(describe(expected)), but received \(describe(next))", location)
                return
            }
            if ContinuousClock.now >= deadline {
                fail(
                    "expected to receive \(describe(expected)), but no action arrived within \(timeout ?? self.timeout)"
                        + (effects.inFlight > 0 ? " (\(effects.inFlight) effect(s) still running)" : "")
                        + schedules.pendingNote(clock: clock), location)
                return
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
        let running = effects.inFlight
        apply(expected, schedule: schedule, firedAt: firedAt, verb: "receive", assert: assert, location: location)
        await letEffectsStart(running)
    }

    /// Gives the effects the last action started a moment to run, up to their end or their first
    /// suspension: an effect that only schedules or cancels (`Effect.schedule`) has then done so before
    /// the test goes on to advance the clock or look at ``pendingSchedules``. Bounded by a number of
    /// yields, not a time: an effect that runs on stops this wait, not the test.
    private func letEffectsStart(_ runningBefore: Int) async {
        var yields = 0
        while effects.inFlight > runningBefore && yields < 100 {
            await Task.yield()
            yields += 1
        }
    }

    /// Ends the test: waits (bounded) for running effects, then fails for any effect still running or any
    /// received action not asserted. With exhaustivity off, leftovers are cancelled and dropped.
    public func finish(
        timeout: Duration? = nil,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async {
        let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        finished = true
        let idle = await effects.waitUntilIdle(timeout: timeout ?? self.timeout)
        // Whatever was pending is forgotten, so that a clock the test goes on using fires nothing into this store.
        let pendingSchedules = schedules.cancelAll()
        guard exhaustivity == .on else {
            effects.cancelAll()
            return
        }
        if !idle {
            fail("\(effects.inFlight) effect(s) still running at the end of the test; await what they send, or cancel them", location)
            effects.cancelAll()
        }
        if !pendingSchedules.isEmpty {
            fail(
                "\(pendingSchedules.count) schedule(s) still pending at the end of the test: "
                    + pendingSchedules.map { "'\($0.id)' (\(describe($0.action)) due \($0.due))" }.joined(separator: ", ")
                    + (clock == nil
                        ? "; give the TestStore a TestClock and advance it to fire them, or cancel them"
                        : "; advance the clock and receive their actions, or cancel them"),
                location)
        }
        let leftover = inbox.drain()
        if !leftover.isEmpty {
            fail(
                "\(leftover.count) received action(s) were never asserted: " + leftover.map { describe($0.action) }.joined(separator: ", "),
                location)
        }
    }

    deinit {
        let pendingSchedules = schedules.cancelAll()
        if !finished && (effects.inFlight > 0 || !pendingSchedules.isEmpty) && exhaustivity == .on {
            reportFailure(
                "the TestStore was released with \(effects.inFlight) effect(s) running and \(pendingSchedules.count) schedule(s) pending;"
                    + " call `await store.finish()`",
                SourceLocation(fileID: #fileID, filePath: #filePath, line: #line, column: #column))
        }
        effects.cancelAll()
    }

    /// The schedules effects made that have not fired or been cancelled, by id, with their due times.
    public var pendingSchedules: [String: Date] { schedules.pending }

    private func apply(
        _ action: Action, schedule: Stamp.Schedule? = nil, firedAt: Date? = nil, verb: String, assert: ((inout State) throws -> Void)?,
        location: SourceLocation,
        check: Bool = true
    ) {
        let before = state
        seq += 1
        let stamp = Stamp(seq: seq, time: firedAt ?? time, schedule: schedule)
        let effect = reducer(&state, action, environment, stamp: stamp)
        // A delay an effect of this action asks for counts from its stamp, as the dispatcher counts it from
        // the request it sequences right after: not from whenever the effect's task happens to run.
        let inbox = inbox, schedules = schedules
        effects.run(effect, send: Send({ inbox.append($0) }, schedule: { schedules.take($0, from: stamp) }))
        guard check else { return }
        var expected: State
        switch exhaustivity {
        case .on:
            expected = before
        case .off:
            // Only what the assertion sets is checked: apply it to the actual state and compare.
            guard assert != nil else { return }
            expected = state
        }
        do {
            try assert?(&expected)
        } catch {
            fail("the assertion for \(verb) \(describe(action)) threw \(error)", location)
            return
        }
        if expected != state {
            let what =
                assert == nil
                ? "\(verb) \(describe(action)) changed the state, but the test asserted no change"
                : "the state after \(verb) \(describe(action)) is not what the test expected"
            fail("\(what) (− expected, + actual):\n\(StateDiff.describe(expected: expected, actual: state))", location)
        }
    }

    private func describe(_ action: Action) -> String { "'\(action)'" }

    private func fail(_ message: String, _ location: SourceLocation) { reportFailure(message, location) }
}

/// The actions effects sent and schedules fired, in order, shared with the effects' tasks and the clock;
/// a scheduled action comes with when it was due.
final class Inbox<Action: Sendable>: @unchecked Sendable {
    /// An action to receive; for one a schedule fired, when it was due and the time it fired.
    typealias Entry = (action: Action, schedule: Stamp.Schedule?, firedAt: Date?)
    // @unchecked: every access goes through the lock.
    private let lock = NSLock()
    private var entries: [Entry] = []

    func append(_ action: Action, schedule: Stamp.Schedule? = nil, firedAt: Date? = nil) {
        lock.withLock { entries.append((action, schedule, firedAt)) }
    }
    func popFirst() -> Entry? { lock.withLock { entries.isEmpty ? nil : entries.removeFirst() } }
    var first: Entry? { lock.withLock { entries.first } }
    var count: Int { lock.withLock { entries.count } }
    func drain() -> [Entry] {
        lock.withLock {
            defer { entries = [] }; return entries
        }
    }
}

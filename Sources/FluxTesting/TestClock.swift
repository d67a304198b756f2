import FluxCore
import Foundation
import Synchronization

/// A clock that moves only when the test says: the time of a `TestStore` or a `TestCluster` given one,
/// and, through ``effectClock``, of the effects that sleep.
///
/// ```swift
/// let clock = TestClock()
/// let store = TestStore(Poll.app, environment: Poll.Environment(clock: clock.effectClock), clock: clock)
/// await store.send(.opened) { $0.isOpen = true }   // schedules .closed in 60 s
/// clock.advance(by: .seconds(59))                  // nothing is due yet
/// clock.advance(by: .seconds(1))                   // .closed is due: the store receives it
/// await store.receive(.closed) { $0.isOpen = false }
/// ```
///
/// What is due fires while ``advance(by:)`` runs, earliest first, with ``now`` set to its deadline as it
/// fires: a scheduled action goes to its store's inbox there and then; an effect sleeping on
/// ``effectClock`` is resumed, and goes on in its own task once `advance` has returned (a `receive`
/// waits for what it sends). Time never goes backwards: advancing to an earlier date changes nothing.
///
/// Our own rather than swift-clocks' `TestClock`: the model's ``EffectClock`` already abstracts time for
/// effects, so a few dozen lines drive it; another package would add its build to every app's tests, and
/// would still need this bridge to the stores' schedules and to the dispatcher's clock.
public final class TestClock: Sendable {
    /// Something waiting for a time: an effect's sleep, or a store's schedule.
    private enum Waiter {
        case sleep(CheckedContinuation<Void, any Error>)
        case timer(@Sendable () -> Void)
    }

    private struct Deadline {
        var at: Date
        /// Registration order: two deadlines at the same time fire in the order they were set.
        var order: UInt64
        var waiter: Waiter
    }

    private struct State {
        var now: Date
        var deadlines: [UInt64: Deadline] = [:]
        var next: UInt64 = 0
        /// Sleeps cancelled before they were registered (their cancellation handler ran first).
        var cancelledEarly: Set<UInt64> = []
        var observers: [@Sendable (Date) -> Void] = []
    }

    private let state: Mutex<State>

    /// A clock stopped at `now`: by default 2026-01-01T00:00:00Z, the time a `TestStore` and
    /// `EffectClock.mock()` start at.
    public init(now: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        state = Mutex(State(now: now))
    }

    /// The clock's time.
    public var now: Date { state.withLock { $0.now } }

    /// Moves the clock on by `duration`, firing everything due by then in order.
    public func advance(by duration: Duration) {
        advance(to: now.addingTimeInterval(Self.seconds(duration)))
    }

    /// Moves the clock to `date`, firing everything due by then in order (nothing if `date` is not later).
    public func advance(to date: Date) {
        while let waiter = nextDue(by: date) { fire(waiter) }
        let observers = state.withLock { state -> [@Sendable (Date) -> Void] in
            state.now = max(state.now, date)
            return state.observers
        }
        for observe in observers { observe(date) }
    }

    /// Moves the clock on by `duration` as if the cluster were down meanwhile: nothing fires on the way,
    /// and what fell due fires once the time is reached, in order and at the new time, so late, as a
    /// dispatcher that starts again fires what it missed (its stamp's `isLate` says so).
    public func advanceWhileDown(by duration: Duration) {
        let date = now.addingTimeInterval(Self.seconds(duration))
        state.withLock { $0.now = max($0.now, date) }
        advance(to: date)
    }

    /// Moves the clock to the last deadline pending, firing everything on the way in order. What fires
    /// may set new deadlines; those due by then fire too, and later ones stay pending.
    public func run() {
        guard let last = state.withLock({ $0.deadlines.values.map(\.at).max() }) else { return }
        advance(to: last)
    }

    /// How many sleeps and schedules are waiting for the clock.
    public var pending: Int { state.withLock { $0.deadlines.count } }

    /// This clock for effects, as an Environment member: `now` reads it, and `sleep` suspends until the
    /// clock is advanced past the deadline (throwing `CancellationError` when the effect is cancelled).
    public var effectClock: EffectClock {
        EffectClock(now: { [self] in now }, sleep: { [self] duration in try await sleep(for: duration) })
    }

    /// Suspends until the clock reaches `now + duration`.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let key = state.withLock { state -> UInt64 in
            defer { state.next += 1 }
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case waiting, due, cancelled }
                let outcome = state.withLock { state -> Outcome in
                    if state.cancelledEarly.remove(key) != nil { return .cancelled }
                    let at = state.now.addingTimeInterval(Self.seconds(duration))
                    if at <= state.now { return .due }
                    state.deadlines[key] = Deadline(at: at, order: key, waiter: .sleep(continuation))
                    return .waiting
                }
                switch outcome {
                case .waiting: break
                case .due: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let deadline = state.deadlines.removeValue(forKey: key) else {
                    state.cancelledEarly.insert(key)
                    return nil
                }
                return deadline.waiter
            }
            if case .sleep(let continuation) = waiter { continuation.resume(throwing: CancellationError()) }
        }
        // A sleep that ended normally leaves no mark; one whose handler ran after it ended leaves a key
        // nothing will look up again: drop it.
        state.withLock { _ = $0.cancelledEarly.remove(key) }
    }

    /// Calls `fire` once the clock reaches `date` (from `advance`, on the advancing thread), or at once if
    /// it already has. Returns a key for ``cancelTimer(_:)``.
    @discardableResult
    package func setTimer(at date: Date, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        let (key, due) = state.withLock { state -> (UInt64, Bool) in
            defer { state.next += 1 }
            if date <= state.now { return (state.next, true) }
            state.deadlines[state.next] = Deadline(at: date, order: state.next, waiter: .timer(fire))
            return (state.next, false)
        }
        if due { fire() }
        return key
    }

    /// Forgets a timer that has not fired.
    package func cancelTimer(_ key: UInt64) {
        state.withLock { _ = $0.deadlines.removeValue(forKey: key) }
    }

    /// Calls `observe` with the new time each time the clock is advanced: a cluster's dispatcher wakes to
    /// look at its schedules.
    package func onAdvance(_ observe: @escaping @Sendable (Date) -> Void) {
        state.withLock { $0.observers.append(observe) }
    }

    /// The earliest waiter due by `date`, taken off the list with the clock moved to its deadline.
    private func nextDue(by date: Date) -> Waiter? {
        state.withLock { state in
            guard let (key, first) = state.deadlines.min(by: { ($0.value.at, $0.value.order) < ($1.value.at, $1.value.order) }),
                first.at <= date
            else { return nil }
            state.deadlines[key] = nil
            state.now = max(state.now, first.at)
            return first.waiter
        }
    }

    private func fire(_ waiter: Waiter) {
        switch waiter {
        case .sleep(let continuation): continuation.resume()
        case .timer(let fire): fire()
        }
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

import FluxCore
import Foundation
import Synchronization

/// A `TestStore`'s pending schedules: what its effects ordered (``ScheduleOrder``), kept by id and set
/// on its ``TestClock``, which puts each action in the store's inbox when the test advances past its
/// due time. Without a clock they are only kept, for `finish()` to report.
final class TestSchedules<Action: Sendable>: Sendable {
    struct Pending: Sendable {
        var id: String
        var action: Action
        var due: Date
        /// The seq of the action whose effect asked for it: what its stamp names as the request (in a
        /// cluster, the request is sequenced on its own, right after).
        var requestSeq: UInt64
        /// Tells this schedule from an earlier one with its id.
        var generation: UInt64
        /// Its timer on the clock, if there is a clock.
        var timer: UInt64? = nil
    }

    private struct State {
        var pending: [String: Pending] = [:]
        var generations: UInt64 = 0
    }

    private let clock: TestClock?
    private let inbox: Inbox<Action>
    private let state = Mutex(State())

    init(clock: TestClock?, inbox: Inbox<Action>) {
        self.clock = clock
        self.inbox = inbox
    }

    /// Carries out an order from an effect of the action stamped `stamp`: a schedule replaces a pending
    /// one with its id, its delay counted from the stamp's time; a cancel removes it.
    func take(_ order: ScheduleOrder<Action>, from stamp: Stamp) {
        switch order {
        case .cancel(let id):
            if let timer = state.withLock({ $0.pending.removeValue(forKey: id)?.timer }) { clock?.cancelTimer(timer) }
        case .schedule(let id, let action, let when):
            let (entry, replaced) = state.withLock { state -> (Pending, Pending?) in
                let due =
                    switch when {
                    case .at(let date): date
                    case .after(let delay): stamp.time.addingTimeInterval(TestClock.seconds(delay))
                    }
                state.generations += 1
                let entry = Pending(id: id, action: action, due: due, requestSeq: stamp.seq, generation: state.generations)
                return (entry, state.pending.updateValue(entry, forKey: id))
            }
            if let timer = replaced?.timer { clock?.cancelTimer(timer) }
            guard let clock else { return }
            // Set outside the lock: a time already past fires at once, into the inbox.
            let timer = clock.setTimer(at: entry.due) { [weak self] in self?.fire(id: id, generation: entry.generation) }
            state.withLock { state in
                // Unless it fired at once, or was replaced or cancelled meanwhile.
                if state.pending[id]?.generation == entry.generation {
                    state.pending[id]?.timer = timer
                }
            }
        }
    }

    private func fire(id: String, generation: UInt64) {
        let fired = state.withLock { state -> Pending? in
            guard state.pending[id]?.generation == generation else { return nil }
            return state.pending.removeValue(forKey: id)
        }
        // Stamped with the clock's time as it fires (its deadline, when an advance passes several), as the
        // dispatcher stamps the time it sequences the action: not with whenever the test receives it.
        if let fired {
            inbox.append(fired.action, schedule: Stamp.Schedule(due: fired.due, requestSeq: fired.requestSeq), firedAt: clock?.now ?? fired.due)
        }
    }

    /// Pending schedules by id, with their due times.
    var pending: [String: Date] { state.withLock { $0.pending.mapValues(\.due) } }

    /// Forgets every pending schedule and returns them, earliest first.
    func cancelAll() -> [Pending] {
        let all = state.withLock { state -> [Pending] in
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        for entry in all { if let timer = entry.timer { clock?.cancelTimer(timer) } }
        return all.sorted { ($0.due, $0.id) < ($1.due, $1.id) }
    }

    /// For a `receive` that found nothing: the schedules still waiting for the clock, if any.
    func pendingNote(clock: TestClock?) -> String {
        let pending = state.withLock { $0.pending.values.sorted { ($0.due, $0.id) < ($1.due, $1.id) } }
        guard let first = pending.first else { return "" }
        let now = clock.map { " (the clock is at \($0.now))" } ?? " (no TestClock: schedules never fire)"
        return " (\(pending.count) schedule(s) pending, the first '\(first.id)' due \(first.due)\(now))"
    }
}

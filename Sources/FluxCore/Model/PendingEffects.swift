import Foundation

/// The effects one action asked for, bound to where their actions go, and not started.
///
/// An ``AppRuntime`` returns them from ``AppRuntime/reduce(app:actionType:payload:stamp:)`` instead of
/// starting them, so whoever applied the action decides whether they run: a store's core hands the
/// effects of live actions to its shell as a command, and the shell starts them on its
/// ``EffectTasks``. Holding a value of this type starts nothing.
public struct PendingEffects: Sendable {
    enum Operation: Sendable {
        case run(id: EffectID?, cancelInFlight: Bool, body: @Sendable () async -> Void)
        case cancel(EffectID)
        /// Work done at once, on the starting thread: the simulator's effects, so a seed replays exactly,
        /// and schedule orders, so they keep the order of the actions that asked.
        case inline(@Sendable () -> Void)
    }

    let operations: [Operation]

    /// No work.
    public static var none: PendingEffects { PendingEffects(operations: []) }

    /// Whether there is nothing to start.
    public var isEmpty: Bool { operations.isEmpty }

    init(operations: [Operation]) { self.operations = operations }

    /// `effect`'s work, each action it sends handed to `send`; an action sent once its work was
    /// cancelled is dropped.
    public init<Action: Sendable>(_ effect: Effect<Action>, send: Send<Action>) {
        self.init(effect, send: send, schedulesFrom: nil)
    }

    /// `effect`'s work, its delays (``Effect/schedule(_:after:id:)``) counted from `time`: the stamp of
    /// the action whose reducer asked, as a `TestStore` counts them, so that a store whose requests
    /// reach the dispatcher late (a backlog, a failover) does not move the due time.
    package init<Action: Sendable>(_ effect: Effect<Action>, send: Send<Action>, schedulesFrom time: Date?) {
        // Most actions ask for no effect: this skips the generic map and the run-time look-ups of
        // generic types it needs, which cost a replaying store a tenth of its time.
        guard effect.hasWork else {
            operations = []
            return
        }
        operations = effect.operations.map { operation in
            switch operation {
            case .run(let id, let cancelInFlight, let body):
                .run(
                    id: id, cancelInFlight: cancelInFlight,
                    body: {
                        await body(
                            Send(
                                { action in if !Task.isCancelled { send(action) } },
                                schedule: { order in if !Task.isCancelled { send.order(order) } }))
                    })
            case .cancel(let id):
                .cancel(id)
            case .order(let order):
                // Handed over as the effects start, on the thread that starts them: in action order.
                .inline { send.order(PendingEffects.anchored(order, at: time)) }
            }
        }
    }

    /// `order` with a delay turned into the time it comes to after `time` (when there is one).
    static func anchored<Action: Sendable>(_ order: ScheduleOrder<Action>, at time: Date?) -> ScheduleOrder<Action> {
        guard let time, case .schedule(let id, let action, .after(let delay)) = order else { return order }
        let (seconds, attoseconds) = delay.components
        return .schedule(id: id, action: action, when: .at(time.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)))
    }

    /// Work done synchronously when started, for the simulator, which runs effects at simulated times
    /// of its choosing instead of on tasks.
    @_spi(Simulation) public init(inline work: @escaping @Sendable () -> Void) {
        operations = [.inline(work)]
    }
}

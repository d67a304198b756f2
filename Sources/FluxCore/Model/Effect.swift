import Foundation

/// Work a reducer asks its store to do after an action: never done inside the reducer itself.
///
/// A store runs the effects its reducer returns with the app's `Environment`. The actions an effect
/// sends go back through the dispatcher's intake, so they are sequenced and journaled like any other
/// action. When a store recovers by replay, effects are not run again.
public struct Effect<Action: Sendable>: Sendable {
    @usableFromInline enum Operation: Sendable {
        case run(id: EffectID?, cancelInFlight: Bool, body: @Sendable (Send<Action>) async -> Void)
        case cancel(EffectID)
        /// A schedule order, handed over when the effect starts, in the order of the actions that asked:
        /// not on a task, which could run after a later action's order (a cancel overtaking the schedule
        /// it cancels).
        case order(ScheduleOrder<Action>)
    }

    @usableFromInline let operations: [Operation]
    /// Whether there is work: read without knowing `Action` at run time, unlike `operations.isEmpty`
    /// in code not specialized for the app (a store's runtime asks it for every action it applies).
    @usableFromInline let hasWork: Bool

    @inlinable init(operations: [Operation]) {
        self.operations = operations
        hasWork = !operations.isEmpty
    }

    /// No work. Inlined into the reducer that returns it, so that it is made for the app's own
    /// `Action` without a look-up of generic types at run time (a replaying store returns it a
    /// million times).
    @inlinable public static var none: Effect { Effect(operations: []) }

    /// An async operation that may send any number of actions.
    public static func run(_ operation: @escaping @Sendable (Send<Action>) async -> Void) -> Effect {
        Effect(operations: [.run(id: nil, cancelInFlight: false, body: operation)])
    }

    /// Sends one action once the current one has been applied.
    public static func send(_ action: Action) -> Effect {
        .run { send in send(action) }
    }

    /// Dispatches `action` once `delay` has passed since the stamp of the action this reducer applies
    /// (its ``Stamp/time``), durably: the request is journaled by the dispatcher,
    /// which sequences `action` when its time comes, even if this store, the dispatcher or the whole
    /// cluster restarted in between. A pending schedule of this app with the same `id` is replaced.
    /// The action's ``Stamp/schedule`` says when it was due.
    ///
    /// The orders of successive actions reach the dispatcher in the order of those actions: a cancel
    /// never overtakes the schedule it cancels.
    public static func schedule(_ action: Action, after delay: Duration, id: String) -> Effect {
        Effect(operations: [.order(.schedule(id: id, action: action, when: .after(delay)))])
    }

    /// Dispatches `action` at `time` (by the dispatcher's clock), durably, as ``schedule(_:after:id:)``.
    public static func schedule(_ action: Action, at time: Date, id: String) -> Effect {
        Effect(operations: [.order(.schedule(id: id, action: action, when: .at(time)))])
    }

    /// Cancels this app's pending schedule `id`, if it has not fired.
    public static func cancelSchedule(id: String) -> Effect {
        Effect(operations: [.order(.cancel(id: id))])
    }

    /// Cancels every running effect marked with `id`.
    public static func cancel(id: some Hashable & Sendable) -> Effect {
        Effect(operations: [.cancel(EffectID(id))])
    }

    /// Runs several effects concurrently.
    public static func merge(_ effects: Effect...) -> Effect { merge(effects) }

    public static func merge(_ effects: [Effect]) -> Effect {
        Effect(operations: effects.flatMap(\.operations))
    }

    /// Marks this effect's work with `id`, so `.cancel(id:)` can stop it. With `cancelInFlight`, starting
    /// it first cancels any running work with the same id (a newer request replaces an older one).
    public func cancellable(id: some Hashable & Sendable, cancelInFlight: Bool = false) -> Effect {
        let id = EffectID(id)
        return Effect(
            operations: operations.map { op in
                switch op {
                case .run(_, _, let body): .run(id: id, cancelInFlight: cancelInFlight, body: body)
                case .cancel, .order: op
                }
            })
    }

    public var isNone: Bool { !hasWork }

    /// Transforms the actions this effect sends (for scoping a child feature into a parent).
    public func map<Other: Sendable>(_ transform: @escaping @Sendable (Action) -> Other) -> Effect<Other> {
        Effect<Other>(
            operations: operations.map { op in
                switch op {
                case .run(let id, let cancelInFlight, let body):
                    .run(
                        id: id, cancelInFlight: cancelInFlight,
                        body: { send in await body(Send({ send(transform($0)) }, schedule: { send.order($0.map(transform)) })) })
                case .cancel(let id):
                    .cancel(id)
                case .order(let order):
                    .order(order.map(transform))
                }
            })
    }
}

extension Effect {
    /// Work that sends nothing back (the seeds' `Effect<Never>`): logging, analytics, a write. The work
    /// is given no `Send`, so it cannot send an action, whatever this effect's action type.
    public static func fireAndForget(_ work: @escaping @Sendable () async -> Void) -> Effect {
        Effect(operations: [.run(id: nil, cancelInFlight: false, body: { _ in await work() })])
    }
}

/// The identity of cancellable work.
public struct EffectID: Hashable, @unchecked Sendable {
    // @unchecked: the wrapped value is required to be Sendable at the only initializer.
    let value: AnyHashable
    init(_ value: some Hashable & Sendable) { self.value = AnyHashable(value) }
}

/// How an effect sends actions back into the system, now or at a later time.
public struct Send<Action: Sendable>: Sendable {
    let body: @Sendable (Action) -> Void
    let scheduler: (@Sendable (ScheduleOrder<Action>) -> Void)?

    /// Sends each action to `body`; schedule orders are dropped.
    public init(_ body: @escaping @Sendable (Action) -> Void) {
        self.body = body
        scheduler = nil
    }

    /// Sends each action to `body` and each schedule order to `schedule`: a store's runtime sends them
    /// to the dispatcher, a `TestStore` to its clock.
    package init(_ body: @escaping @Sendable (Action) -> Void, schedule: @escaping @Sendable (ScheduleOrder<Action>) -> Void) {
        self.body = body
        scheduler = schedule
    }

    public func callAsFunction(_ action: Action) { body(action) }

    /// Asks the cluster to dispatch `action` once `delay` has passed since this request is sequenced,
    /// under `id`: a pending schedule with the same id (in this app) is replaced. The schedule is
    /// journaled, so it fires once even if the store, the dispatcher or the whole cluster stops and
    /// starts again in between (docs/GUIDE.md, "Scheduled actions").
    package func schedule(_ action: Action, after delay: Duration, id: String) { order(.schedule(id: id, action: action, when: .after(delay))) }

    /// Asks the cluster to dispatch `action` at `time` (by the dispatcher's clock), under `id`.
    package func schedule(_ action: Action, at time: Date, id: String) { order(.schedule(id: id, action: action, when: .at(time))) }

    /// Cancels the pending schedule `id` of this app, if there is one.
    package func cancelSchedule(id: String) { order(.cancel(id: id)) }

    /// Hands `order` on, or drops it if nothing takes schedule orders here.
    package func order(_ order: ScheduleOrder<Action>) { scheduler?(order) }
}

/// What an effect asks of the cluster's schedules (``Send/schedule(_:after:id:)``).
@usableFromInline package enum ScheduleOrder<Action: Sendable>: Sendable {
    /// Dispatch `action` at `when`, under `id` (replacing a pending schedule with that id).
    case schedule(id: String, action: Action, when: ScheduleTime)
    /// Cancel the pending schedule `id`.
    case cancel(id: String)

    /// The same order for another action type.
    package func map<Other: Sendable>(_ transform: (Action) -> Other) -> ScheduleOrder<Other> {
        switch self {
        case .schedule(let id, let action, let when): .schedule(id: id, action: transform(action), when: when)
        case .cancel(let id): .cancel(id: id)
        }
    }
}

/// When a scheduled action is due.
@usableFromInline package enum ScheduleTime: Sendable, Equatable, Hashable {
    /// At a wall-clock time.
    case at(Date)
    /// This long after the stamp of the action whose reducer asked.
    case after(Duration)
}

/// Work a reducer asks its store to do after an action: never done inside the reducer itself.
///
/// A store runs the effects its reducer returns with the app's `Environment`. The actions an effect
/// sends go back through the dispatcher's intake, so they are sequenced and journaled like any other
/// action. When a store recovers by replay, effects are not run again.
public struct Effect<Action: Sendable>: Sendable {
    @usableFromInline enum Operation: Sendable {
        case run(id: EffectID?, cancelInFlight: Bool, body: @Sendable (Send<Action>) async -> Void)
        case cancel(EffectID)
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
                case .cancel: op
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
                    .run(id: id, cancelInFlight: cancelInFlight, body: { send in await body(Send { send(transform($0)) }) })
                case .cancel(let id):
                    .cancel(id)
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

/// How an effect sends actions back into the system.
public struct Send<Action: Sendable>: Sendable {
    let body: @Sendable (Action) -> Void
    public init(_ body: @escaping @Sendable (Action) -> Void) { self.body = body }
    public func callAsFunction(_ action: Action) { body(action) }
}

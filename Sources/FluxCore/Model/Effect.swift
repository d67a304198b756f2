/// Work a reducer asks its store to do after an action: never done inside the reducer itself.
///
/// A store runs the effects its reducer returns with the app's `Environment`; the actions an effect
/// sends go back through the dispatcher's intake, so they are sequenced and journaled like any other.
/// When a store recovers by replay, effects are not run again.
public struct Effect<Action: Sendable>: Sendable {
    enum Operation: Sendable {
        case none
        case run(@Sendable (Send<Action>) async -> Void)
    }

    let operations: [Operation]

    /// No work.
    public static var none: Effect { Effect(operations: []) }

    /// An async operation that may send any number of actions.
    public static func run(_ operation: @escaping @Sendable (Send<Action>) async -> Void) -> Effect {
        Effect(operations: [.run(operation)])
    }

    /// Sends one action once the current one has been applied.
    public static func send(_ action: Action) -> Effect {
        .run { send in send(action) }
    }

    /// Work that sends nothing back (the seeds' `Effect<Never>`): logging, analytics, a write.
    public static func fireAndForget(_ work: @escaping @Sendable () async -> Void) -> Effect {
        .run { _ in await work() }
    }

    /// Runs several effects concurrently.
    public static func merge(_ effects: Effect...) -> Effect {
        Effect(operations: effects.flatMap(\.operations))
    }

    public var isNone: Bool { operations.isEmpty }

    /// Transforms the actions this effect sends (for scoping a child feature into a parent).
    public func map<Other: Sendable>(_ transform: @escaping @Sendable (Action) -> Other) -> Effect<Other> {
        Effect<Other>(operations: operations.map { op in
            switch op {
            case .none: .none
            case .run(let body): .run { send in await body(Send { send(transform($0)) }) }
            }
        })
    }

    /// Runs every operation, concurrently, and returns when all have finished.
    public func run(send: Send<Action>) async {
        await withTaskGroup(of: Void.self) { group in
            for op in operations {
                if case .run(let body) = op { group.addTask { await body(send) } }
            }
        }
    }
}

/// How an effect sends actions back into the system.
public struct Send<Action: Sendable>: Sendable {
    let body: @Sendable (Action) -> Void
    public init(_ body: @escaping @Sendable (Action) -> Void) { self.body = body }
    public func callAsFunction(_ action: Action) { body(action) }
}

import Foundation
import Synchronization

/// Starts effects as tasks, remembers which are still running, and cancels them by id or all at once.
///
/// A store's shell keeps one and starts on it the ``PendingEffects`` its core hands over; an
/// ``EffectRunner`` keeps one for the effects of its action type.
public final class EffectTasks: Sendable {
    private struct Running {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var ids: [EffectID: Set<UInt64>] = [:]
        var next: UInt64 = 0
    }

    private let running = Mutex(Running())

    public init() {}

    /// Starts `effects`, in order: a cancellation stops the running work marked with its id, and work
    /// marked `cancelInFlight` stops the running work with its own id first.
    public func run(_ effects: PendingEffects) {
        for operation in effects.operations {
            switch operation {
            case .cancel(let id):
                cancel(id)
            case .run(let id, let cancelInFlight, let body):
                if let id, cancelInFlight { cancel(id) }
                start(id: id, body)
            case .inline(let work):
                work()
            }
        }
    }

    private func start(id: EffectID?, _ body: @escaping @Sendable () async -> Void) {
        running.withLock { r in
            let key = r.next
            r.next += 1
            // Registered under the lock before it can finish, so `finished` always finds it.
            r.tasks[key] = Task { [weak self] in
                await body()
                self?.finished(key, id: id)
            }
            if let id { r.ids[id, default: []].insert(key) }
        }
    }

    private func finished(_ key: UInt64, id: EffectID?) {
        running.withLock { r in
            r.tasks[key] = nil
            if let id {
                r.ids[id]?.remove(key)
                if r.ids[id]?.isEmpty == true { r.ids[id] = nil }
            }
        }
    }

    private func cancel(_ id: EffectID) {
        let tasks = running.withLock { r -> [Task<Void, Never>] in
            let keys = r.ids.removeValue(forKey: id) ?? []
            return keys.compactMap { r.tasks.removeValue(forKey: $0) }
        }
        tasks.forEach { $0.cancel() }
    }

    /// How many effects are still running.
    public var inFlight: Int { running.withLock { $0.tasks.count } }

    /// Cancels everything still running.
    public func cancelAll() {
        let tasks = running.withLock { r -> [Task<Void, Never>] in
            defer { r.tasks = [:]; r.ids = [:] }
            return Array(r.tasks.values)
        }
        tasks.forEach { $0.cancel() }
    }

    /// Waits until no effect is running, or the timeout passes; returns whether all finished.
    public func waitUntilIdle(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while inFlight > 0 {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }
}

/// Runs one action type's effects as tasks, sending their actions to one place.
///
/// `TestStore` uses one to know whether any effect is still running when a test ends.
public final class EffectRunner<Action: Sendable>: Sendable {
    private let send: Send<Action>
    private let tasks = EffectTasks()

    public init(send: Send<Action>) { self.send = send }

    public func run(_ effect: Effect<Action>) { tasks.run(PendingEffects(effect, send: send)) }

    /// Runs `effect` with its own `send`: a `TestStore` gives each action's effects one that knows the
    /// action's stamp, so that a delay they ask for counts from it whenever their task gets to run.
    package func run(_ effect: Effect<Action>, send: Send<Action>) { tasks.run(PendingEffects(effect, send: send)) }

    /// How many effects are still running.
    public var inFlight: Int { tasks.inFlight }

    /// Cancels everything still running.
    public func cancelAll() { tasks.cancelAll() }

    /// Waits until no effect is running, or the timeout passes; returns whether all finished.
    public func waitUntilIdle(timeout: Duration) async -> Bool { await tasks.waitUntilIdle(timeout: timeout) }
}

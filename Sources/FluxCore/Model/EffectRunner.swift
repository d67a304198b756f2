import Foundation
import Synchronization

/// Runs effects as tasks, remembers which are still running, and cancels them by id.
///
/// Stores use one to run their reducer's effects; `TestStore` uses one to know whether any effect is
/// still running when a test ends.
public final class EffectRunner<Action: Sendable>: Sendable {
    private struct Running {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var ids: [EffectID: Set<UInt64>] = [:]
        var next: UInt64 = 0
    }

    private let send: Send<Action>
    private let running = Mutex(Running())

    public init(send: Send<Action>) { self.send = send }

    public func run(_ effect: Effect<Action>) {
        for operation in effect.operations {
            switch operation {
            case .cancel(let id):
                cancel(id)
            case .run(let id, let cancelInFlight, let body):
                if let id, cancelInFlight { cancel(id) }
                start(id: id, body)
            }
        }
    }

    private func start(id: EffectID?, _ body: @escaping @Sendable (Send<Action>) async -> Void) {
        let send = send
        running.withLock { r in
            let key = r.next
            r.next += 1
            // Registered under the lock before it can finish, so `finished` always finds it.
            r.tasks[key] = Task { [weak self] in
                await body(Send { action in if !Task.isCancelled { send(action) } })
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

import FluxCore

/// An app's runtime with a hook around each action its reducer is offered: the store's shell marks
/// the seq being applied (its crash marker), the simulator's makes some actions "trap". `before`
/// returns false to pass the action by (as one that is not this runtime's); `after` runs once the
/// reducer returned or threw. Everything else goes to the runtime inside as it is.
package final class InterceptedRuntime: AppRuntime {
    let inner: any AppRuntime
    let before: (_ app: String, _ actionType: String, _ payload: [UInt8], _ stamp: Stamp) -> Bool
    let after: () -> Void

    package init(
        _ inner: any AppRuntime, before: @escaping (String, String, [UInt8], Stamp) -> Bool, after: @escaping () -> Void = {}
    ) {
        self.inner = inner
        self.before = before
        self.after = after
    }

    package func reduce(app: String, actionType: String, payload: [UInt8], stamp: Stamp) throws(ActionError) -> PendingEffects? {
        guard before(app, actionType, payload, stamp) else { return nil }
        defer { after() }
        return try inner.reduce(app: app, actionType: actionType, payload: payload, stamp: stamp)
    }

    package func apply(app: String, actionType: String, payload: [UInt8], stamp: Stamp, runEffects: Bool) throws(ActionError) -> Bool {
        guard before(app, actionType, payload, stamp) else { return false }
        defer { after() }
        return try inner.apply(app: app, actionType: actionType, payload: payload, stamp: stamp, runEffects: runEffects)
    }

    package func encodedState() throws -> [UInt8] { try inner.encodedState() }
    package func takeChanges() throws -> [UInt8]? { try inner.takeChanges() }
    package func forgetChanges() { inner.forgetChanges() }
    package func loadState(_ bytes: [UInt8]) throws { try inner.loadState(bytes) }
    package func encodedSnapshot() throws -> [UInt8] { try inner.encodedSnapshot() }
    package func loadSnapshot(_ bytes: [UInt8]) throws { try inner.loadSnapshot(bytes) }
    package var effectsInFlight: Int { inner.effectsInFlight }
    package func cancelEffects() { inner.cancelEffects() }
}

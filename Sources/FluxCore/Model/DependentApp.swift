import Foundation

/// What a reducer that reads another store sees: its own environment, and the other store's state as of
/// the action being applied.
public struct WithOtherState<Environment: Sendable, Other: Sendable>: Sendable {
    public let environment: Environment
    /// The other store's state at the same version: it has already applied this action (`waitFor`).
    public let other: Other

    public init(environment: Environment, other: Other) {
        self.environment = environment
        self.other = other
    }
}

/// An app whose store reads another app's state: Flux's `waitFor`, across processes.
///
/// The store keeps its own replica of the other app's state by applying the other app's actions with
/// the other app's reducer. Every store sees every action in the same order and reducers are
/// deterministic, so when this store applies action N the replica is exactly the other store's state at
/// version N, with no extra round trip and no way to read a stale or a future state. The replica never
/// runs effects: effects run once, in the store that owns the state.
///
/// The replica applies exactly what the other store applies: an action the other app's `reject` refuses
/// in the replica's state changes nothing here either. The other app's actions it accepted reach
/// `onOtherAction` after the replica applied them, so this store can react to them (both stores handle
/// the same action; this one waits for the other); the effect it returns runs here, for live actions only.
public struct DependentApp<State, Action, Environment, OtherState, OtherAction, OtherEnvironment>: Sendable
where
    State: Codable & Equatable & Sendable, Action: Codable & Sendable, Environment: Sendable,
    OtherState: Codable & Equatable & Sendable, OtherAction: Codable & Sendable, OtherEnvironment: Sendable
{
    public let base: FluxApp<State, Action, WithOtherState<Environment, OtherState>>
    public let other: FluxApp<OtherState, OtherAction, OtherEnvironment>
    public let environment: Environment
    /// How this store reacts to the other app's actions, reading the other state as of each one; the
    /// effects it returns are this app's.
    public let onOtherAction: OtherActionHandler
    public typealias OtherActionHandler = @Sendable (inout State, OtherAction, WithOtherState<Environment, OtherState>, Stamp) -> Effect<Action>

    public init(
        name: String, summary: String = "", reading other: FluxApp<OtherState, OtherAction, OtherEnvironment>, initialState: State,
        reducer: Reducer<State, Action, WithOtherState<Environment, OtherState>>, environment: Environment,
        onOtherAction: @escaping OtherActionHandler = { _, _, _, _ in .none },
        validate: (@Sendable (Action) -> String?)? = nil,
        middleware: [Middleware<Action>] = [],
        reject: @escaping @Sendable (State, Action) -> String? = { _, _ in nil },
        render: @escaping @Sendable (State) -> String = { String(describing: $0) },
        actions: [ActionExample<Action>] = []
    ) {
        // The environment's `other` is filled in per action by the runtime; this one is a placeholder.
        self.base = FluxApp(
            name: name, summary: summary, initialState: initialState, reducer: reducer,
            environment: WithOtherState(environment: environment, other: other.initialState), validate: validate, middleware: middleware,
            reject: reject, render: render, actions: actions)
        self.other = other
        self.environment = environment
        self.onOtherAction = onOtherAction
    }
}

extension DependentApp: AnyApp {
    public var name: String { base.name }
    public var reads: [String] { [other.name] + other.reads }
    public func check(actionType: String, payload: [UInt8]) throws(ActionError) { try base.check(actionType: actionType, payload: payload) }
    public func admit(
        actionType: String, payload: [UInt8], client: UInt64, origin: ActionOrigin, host: any MiddlewareHost
    )
        throws(ActionError) -> [UInt8]
    {
        try base.admit(actionType: actionType, payload: payload, client: client, origin: origin, host: host)
    }
    public func describe() -> AppDescription {
        AppDescription(name: name, summary: base.summary, reads: reads, actions: base.actions.map(ActionDescription.init))
    }
    public func wirePayload(type: String, argumentsJSON: [UInt8], format: WireCodec.Format) throws(ActionError) -> [UInt8] {
        try base.wirePayload(type: type, argumentsJSON: argumentsJSON, format: format)
    }
    public func stateJSON(fromWire bytes: [UInt8]) throws -> [UInt8] { try base.stateJSON(fromWire: bytes) }
    public func render(wire bytes: [UInt8]) throws -> String { try base.render(wire: bytes) }
    public func actionJSON(fromWire bytes: [UInt8]) throws -> [UInt8] { try base.actionJSON(fromWire: bytes) }
    public func makeReplica(format: WireCodec.Format) -> any StateReplica { base.makeReplica(format: format) }

    public func makeRuntime(format: WireCodec.Format, deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) -> any AppRuntime {
        DependentRuntime(app: self, codec: WireCodec(format), deliver: deliver)
    }
}

final class DependentRuntime<State, Action, Environment, OtherState, OtherAction, OtherEnvironment>: StatefulRuntime
where
    State: Codable & Equatable & Sendable, Action: Codable & Sendable, Environment: Sendable,
    OtherState: Codable & Equatable & Sendable, OtherAction: Codable & Sendable, OtherEnvironment: Sendable
{
    let app: DependentApp<State, Action, Environment, OtherState, OtherAction, OtherEnvironment>
    var state: State
    var other: OtherState
    /// Where the actions of this app's effects go: encoded, then delivered.
    let send: Send<Action>
    /// The effects ``apply(app:actionType:payload:stamp:runEffects:)`` started.
    let tasks = EffectTasks()
    let codec: WireCodec

    init(
        app: DependentApp<State, Action, Environment, OtherState, OtherAction, OtherEnvironment>, codec: WireCodec,
        deliver: @escaping @Sendable (String, String, [UInt8]) -> Void
    ) {
        self.app = app
        self.state = app.base.initialState
        self.other = app.other.initialState
        self.codec = codec
        self.send = app.base.deliverer(codec, deliver)
    }

    func reduce(app name: String, actionType: String, payload: [UInt8], stamp: Stamp) throws(ActionError) -> PendingEffects? {
        if name == app.other.name {
            // An action the other store cannot decode or refuses leaves its state, and so the replica and
            // this store, as they were: the replica is exactly the other store's state, not an approximation.
            guard let action = try? app.other.decodeAction(actionType: actionType, payload: payload, verifyType: false),
                app.other.reject(other, action) == nil
            else { return nil }
            // The replica applies first (waitFor); its effects belong to the other store and never run here.
            _ = app.other.reducer(&other, action, app.other.environment, stamp: stamp)
            // The other app's reducer returned Effect<OtherAction>; this one returns this app's own effects.
            let effect = app.onOtherAction(&state, action, WithOtherState(environment: app.environment, other: other), stamp)
            return PendingEffects(effect, send: send, schedulesFrom: stamp.time)
        }
        guard name == app.base.name else { return nil }
        let action = try app.base.decodeAction(actionType: actionType, payload: payload, verifyType: false)
        if let reason = app.base.reject(state, action) { throw ActionError(reason) }
        let effect = app.base.reducer(&state, action, WithOtherState(environment: app.environment, other: other), stamp: stamp)
        return PendingEffects(effect, send: send, schedulesFrom: stamp.time)
    }

    /// Only this store's own state is published (``StatefulRuntime``'s `encodedState()` and this); the
    /// replica is private.
    func takeChanges() throws -> [UInt8]? { try ChangeTracking.take(&state, codec: codec) }
    func forgetChanges() { ChangeTracking.forget(&state) }

    /// The snapshot holds the replica too: without it, a restored store would read a stale other state.
    struct Snapshot: Codable {
        var state: State
        var other: OtherState
    }

    func encodedSnapshot() throws -> [UInt8] { try codec.encode(Snapshot(state: state, other: other)) }

    func loadSnapshot(_ bytes: [UInt8]) throws {
        let snapshot = try codec.decode(Snapshot.self, from: bytes)
        state = snapshot.state
        other = snapshot.other
    }
}

/// Checks that no app reads itself through a chain of others.
public enum DependencyGraph {
    /// Throws naming the cycle, e.g. "a → b → a", if one exists among `apps`.
    public static func check(_ apps: [any AnyApp]) throws(ActionError) {
        let edges = Dictionary(apps.map { ($0.name, $0.reads) }, uniquingKeysWith: { a, _ in a })
        var done = Set<String>()
        func visit(_ node: String, _ path: [String]) throws(ActionError) {
            if let start = path.firstIndex(of: node) {
                throw ActionError("apps read each other in a cycle: \((path[start...] + [node]).joined(separator: " → "))")
            }
            guard !done.contains(node) else { return }
            for next in edges[node] ?? [] { try visit(next, path + [node]) }
            done.insert(node)
        }
        for app in apps { try visit(app.name, []) }
    }
}

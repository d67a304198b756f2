import Foundation

/// An app with its types erased, so nodes and the CLI can host any app by name.
public protocol AnyApp: Sendable {
    /// The app's name: the topic of its actions.
    var name: String { get }
    /// The apps whose state this app reads (Flux's `waitFor`), by name.
    var reads: [String] { get }
    /// Decodes and validates a wire action (the CLI's check before sending).
    func check(actionType: String, payload: [UInt8]) throws(ActionError)
    /// The dispatcher's admission: decodes and validates a wire action, then runs the app's middleware
    /// chain with `host` for its logs and counts. Returns the payload to sequence (rewritten by the chain,
    /// in the codec it arrived in, or `payload` itself); the dispatcher NACKs with the error's reason.
    /// `origin` is what the chain's steps see as ``MiddlewareContext/origin``.
    func admit(
        actionType: String, payload: [UInt8], client: UInt64, origin: ActionOrigin, host: any MiddlewareHost
    ) throws(ActionError)
        -> [UInt8]
    /// The app for `zflux apps`: its summary and every action with its fields.
    func describe() -> AppDescription
    /// Turns a case name and JSON arguments (from the CLI) into a checked wire payload in `format`.
    func wirePayload(type: String, argumentsJSON: [UInt8], format: WireCodec.Format) throws(ActionError) -> [UInt8]
    /// A fresh instance of the app's state machine, owned by one store thread, writing `format`. The
    /// actions its effects send are handed to `deliver` as (app, case name, wire payload), from any thread.
    func makeRuntime(format: WireCodec.Format, deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) -> any AppRuntime
    /// The state (wire bytes) as JSON for people and scripts.
    func stateJSON(fromWire bytes: [UInt8]) throws -> [UInt8]
    /// The state (wire bytes) rendered as plain text.
    func render(wire bytes: [UInt8]) throws -> String
    /// A wire action (either codec) as JSON, for people and scripts.
    func actionJSON(fromWire bytes: [UInt8]) throws -> [UInt8]
    /// A copy of the state that follows a store's updates, whole or changes only (views, the bench);
    /// `format` is what it encodes the state in.
    func makeReplica(format: WireCodec.Format) -> any StateReplica
}

extension AnyApp {
    /// Admission of a client's action (``admit(actionType:payload:client:origin:host:)`` from a client).
    public func admit(actionType: String, payload: [UInt8], client: UInt64, host: any MiddlewareHost) throws(ActionError) -> [UInt8] {
        try admit(actionType: actionType, payload: payload, client: client, origin: .client, host: host)
    }

    /// A payload in the binary codec, the wire's default.
    public func wirePayload(type: String, argumentsJSON: [UInt8]) throws(ActionError) -> [UInt8] {
        try wirePayload(type: type, argumentsJSON: argumentsJSON, format: .binary)
    }

    /// A runtime writing the binary codec, the wire's default.
    public func makeRuntime(deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) -> any AppRuntime {
        makeRuntime(format: .binary, deliver: deliver)
    }

    public func makeReplica() -> any StateReplica { makeReplica(format: .binary) }
}

/// A view's copy of one app's state, owned by one thread.
public protocol StateReplica: AnyObject {
    /// Replaces the state with a whole one (wire bytes).
    func load(_ bytes: [UInt8]) throws
    /// Applies a changes-only update (wire bytes) to the current state.
    func apply(changes bytes: [UInt8]) throws
    /// The whole state in wire bytes.
    func encodedState() throws -> [UInt8]
}

/// A replica whose state is a value of the app's own `State`: a view hands it to a typed screen as it
/// is, with nothing encoded or decoded on the way.
package protocol TypedStateReplica: StateReplica {
    /// The state the replica holds (a copy: the value's storage is shared until either side changes it).
    var typedState: any Sendable { get }
}

/// One app's live state machine inside a store: not shared between threads.
public protocol AppRuntime: AnyObject {
    /// Offers one sequenced action of any app and returns the effects it asks for, not started: nil when
    /// the action is not this runtime's to apply (its state did not change), else the effects (perhaps
    /// none), for the caller to start or drop. Throws when the action cannot be decoded or the app
    /// rejects it in the current state; the state is unchanged then. `stamp` is the action's seq and
    /// sequenced time, as reducers see them. A store applies actions this way: its core hands the
    /// effects of live actions to its shell, which starts them.
    func reduce(app: String, actionType: String, payload: [UInt8], stamp: Stamp) throws(ActionError) -> PendingEffects?
    /// Offers one sequenced action of any app, as ``reduce(app:actionType:payload:stamp:)`` does, and
    /// starts its effects itself when `runEffects` is true (counted in ``effectsInFlight``). Returns
    /// whether this runtime's state may have changed.
    func apply(app: String, actionType: String, payload: [UInt8], stamp: Stamp, runEffects: Bool) throws(ActionError) -> Bool
    /// The whole state in wire bytes.
    func encodedState() throws -> [UInt8]
    /// What changed since the last call (or `forgetChanges`), in wire bytes, clearing the record; nil
    /// when the state does not record its changes (it is not an `IncrementalState`).
    func takeChanges() throws -> [UInt8]?
    /// Clears the record of changes (after a whole state was published or loaded).
    func forgetChanges()
    /// Replaces the state from wire bytes (snapshots).
    func loadState(_ bytes: [UInt8]) throws
    /// Everything needed to resume this runtime later (for a plain app, its state).
    func encodedSnapshot() throws -> [UInt8]
    /// Resumes from `encodedSnapshot()` bytes.
    func loadSnapshot(_ bytes: [UInt8]) throws
    /// Effects started by ``apply(app:actionType:payload:stamp:runEffects:)`` still running.
    var effectsInFlight: Int { get }
    /// Cancels every running effect that ``apply(app:actionType:payload:stamp:runEffects:)`` started.
    func cancelEffects()
}

extension FluxApp: AnyApp {
    public var reads: [String] { [] }
    /// Reads both codecs (by the first byte).
    var codec: WireCodec { WireCodec() }

    /// The refusal of an action type the app does not have, with the ones it has (its catalog's, in the
    /// catalog's order; kept when the app was made, so a flood of unknown types costs the intake little).
    func noSuchAction(_ actionType: String) -> String {
        "\(name) has no action '\(actionType)'" + (catalogTypeList.isEmpty ? "" : " (it has: \(catalogTypeList))")
    }

    /// Decodes a wire action. With `verifyType` (at the intake) the decoded case must match the header's
    /// action type; stores skip that check, since the dispatcher made it before sequencing.
    func decodeAction(actionType: String, payload: [UInt8], verifyType: Bool = true) throws(ActionError) -> Action {
        let action: Action
        do {
            action = try actionDecoder.decode(payload, codec: codec)
        } catch let error as DecodingError {
            if case .dataCorrupted = error, !WireCodec.isBinary(payload),
                (try? JSONSerialization.jsonObject(with: Data(payload))) == nil
            {
                throw ActionError("the payload of \(name).\(actionType) is not valid JSON")
            }
            // A binary payload cut short or garbled is not a missing action: say what it is.
            if case .dataCorrupted = error, WireCodec.isBinary(payload), !BinaryPayloadCodec.isWellFormed(payload) {
                throw ActionError("the payload of \(name).\(actionType) is not a well-formed binary value (\(payload.count) bytes)")
            }
            // Synthesized enum decoding fails at the top level only when no case matches the key;
            // errors inside the arguments carry a path that starts with the case name.
            if error.codingPath.isEmpty {
                throw ActionError(noSuchAction(actionType))
            }
            throw ActionError("bad arguments for \(name).\(actionType): \(error.shortDescription)")
        } catch {
            throw ActionError("cannot decode \(name).\(actionType): \(error)")
        }
        guard verifyType else { return action }
        // Fast path: a binary payload of one entry names its case; anything else (JSON, whose entries
        // cannot be counted without parsing) is checked by reflection.
        if BinaryPayloadCodec.firstKey(of: payload, is: actionType) { return action }
        let held = ActionCoding.caseName(of: action)
        guard held == actionType else {
            guard catalogTypes.contains(actionType) else { throw ActionError(noSuchAction(actionType)) }
            throw ActionError("the payload of \(name).\(actionType) holds a '\(held)' action")
        }
        return action
    }

    public func check(actionType: String, payload: [UInt8]) throws(ActionError) {
        let action = try decodeAction(actionType: actionType, payload: payload)
        if let reason = validate(action) { throw ActionError(reason) }
    }

    public func admit(
        actionType: String, payload: [UInt8], client: UInt64, origin: ActionOrigin, host: any MiddlewareHost
    )
        throws(ActionError) -> [UInt8]
    {
        // Nothing to run on the value: a binary payload that names a case of the catalog and holds
        // together is taken as it is, without decoding it. One that does not decode as the app's action
        // after all is refused by its stores, each the same way (REJECTED).
        if takesAsIs(actionType: actionType, payload: payload, in: 0..<payload.count) { return payload }
        var action = try decodeAction(actionType: actionType, payload: payload)
        if let reason = validate(action) { throw ActionError(reason) }
        guard !middleware.isEmpty else { return payload }
        try middleware.run(on: &action, app: name, client: client, origin: origin, host: host)
        guard middleware.contains(where: \.rewrites) else { return payload }
        guard ActionCoding.caseName(of: action) == actionType else {
            throw ActionError(
                "\(name)'s middleware turned \(actionType) into \(ActionCoding.caseName(of: action)); it may rewrite an action, not change its type")
        }
        do {
            return try WireCodec(WireCodec.isBinary(payload) ? .binary : .json).encode(action)
        } catch {
            throw ActionError("cannot encode \(name).\(actionType) after its middleware: \(error)")
        }
    }

    public func describe() -> AppDescription {
        AppDescription(name: name, summary: summary, reads: reads, actions: actions.map(ActionDescription.init))
    }

    public func wirePayload(type: String, argumentsJSON: [UInt8], format: WireCodec.Format) throws(ActionError) -> [UInt8] {
        let json = try ActionCoding.json(type: type, arguments: argumentsJSON)
        try check(actionType: type, payload: json)
        guard format == .binary else { return json }
        let action = try decodeAction(actionType: type, payload: json)
        do { return try BinaryPayloadCodec().encode(action) } catch { throw ActionError("cannot encode \(name).\(type): \(error)") }
    }

    public func actionJSON(fromWire bytes: [UInt8]) throws -> [UInt8] {
        // The wire's JSON holds dates as numbers: printed again as people read them, when it decodes.
        guard WireCodec.isBinary(bytes) else { return (try? JSONPayloadCodec().encode(try codec.decode(Action.self, from: bytes))) ?? bytes }
        return try JSONPayloadCodec().encode(try codec.decode(Action.self, from: bytes))
    }

    public func makeReplica(format: WireCodec.Format) -> any StateReplica { FluxStateReplica(initial: initialState, codec: WireCodec(format)) }

    public func makeRuntime(format: WireCodec.Format, deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) -> any AppRuntime {
        FluxAppRuntime(app: self, codec: WireCodec(format), deliver: deliver)
    }

    public func stateJSON(fromWire bytes: [UInt8]) throws -> [UInt8] {
        try JSONPayloadCodec().encode(try codec.decode(State.self, from: bytes))
    }

    public func render(wire bytes: [UInt8]) throws -> String {
        render(try codec.decode(State.self, from: bytes))
    }

    /// Encodes an action an effect sent, for the dispatcher's intake.
    func deliverer(_ codec: WireCodec, _ deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) -> Send<Action> {
        let name = name
        return Send(
            { action in
                guard let bytes = try? codec.encode(action) else { return }
                deliver(name, ActionCoding.caseName(of: action), bytes)
            },
            schedule: { order in
                guard let (type, payload) = try? Self.scheduleRequest(order, app: name, codec: codec) else { return }
                deliver(Schedules.topic, type, payload)
            })
    }

    /// The request on ``Schedules/topic`` that carries `order`: its action type and payload.
    static func scheduleRequest(_ order: ScheduleOrder<Action>, app: String, codec: WireCodec) throws -> (String, [UInt8]) {
        switch order {
        case .schedule(let id, let action, let when):
            var request = ScheduleRequest(id: id, app: app, type: ActionCoding.caseName(of: action), payload: try codec.encode(action))
            // Times past what 64 bits of nanoseconds hold are clamped: the dispatcher then refuses them
            // (more than ten years ahead), with a reason the store logs, instead of this thread trapping.
            switch when {
            case .at(let date):
                let nanoseconds = (date.timeIntervalSince1970 * 1e9).rounded()
                request.atNanoseconds = nanoseconds.isNaN ? Int64.max : Int64(max(min(nanoseconds, 9.2e18), -9.2e18))
            case .after(let delay):
                let (whole, overflow) = delay.components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
                request.afterNanoseconds =
                    overflow ? Int64.max : whole.addingReportingOverflow(delay.components.attoseconds / 1_000_000_000).partialValue
            }
            return (Schedules.scheduleType, try codec.encode(request))
        case .cancel(let id):
            return (Schedules.cancelType, try codec.encode(ScheduleCancel(app: app, id: id)))
        }
    }
}

final class FluxAppRuntime<State, Action, Environment>: StatefulRuntime
where State: Codable & Equatable & Sendable, Action: Codable & Sendable, Environment: Sendable {
    let app: FluxApp<State, Action, Environment>
    @exclusivity(unchecked) var state: State
    /// Where the actions of this app's effects go: encoded, then delivered.
    let send: Send<Action>
    let tasks = EffectTasks()
    let codec: WireCodec

    // The app's parts that every action reaches, kept here as closures and values. This class is
    // compiled once for every app, not for each app's types, so each use of `app` or of a method of
    // another generic type looks that type up at run time: a fifth of a replaying store's time.
    // A closure is called, and a stored property of this class read, without such a look-up.
    private let name: String
    private let decodeBinary: ([UInt8]) throws -> Action
    private let reject: @Sendable (State, Action) -> String?
    private let reducer: @Sendable (inout State, Action, Environment, Stamp) -> Effect<Action>
    private let environment: Environment

    init(app: FluxApp<State, Action, Environment>, codec: WireCodec, deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) {
        self.app = app
        self.state = app.initialState
        self.codec = codec
        self.send = app.deliverer(codec, deliver)
        name = app.name
        // Generated or `Codable`, chosen once: the app's own decode (`decodeAction`), reached through
        // `app`, costs a replaying store a copy of the whole app per action.
        decodeBinary = app.actionDecoder.binary
        reject = app.reject
        reducer = app.reducer.reduce
        environment = app.environment
    }

    func reduce(app name: String, actionType: String, payload: [UInt8], stamp: Stamp) throws(ActionError) -> PendingEffects? {
        guard name == self.name else { return nil }
        // JSON, or a binary payload the decoder refused: the app's own decode, which says why. A binary one
        // is decoded straight into `action`: `try?` would hold it in an `Optional<Action>` first, a type
        // this class (compiled once for every app) looks up at run time for each action.
        let action: Action
        if WireCodec.isBinary(payload) {
            do { action = try decodeBinary(payload) } catch {
                action = try app.decodeAction(actionType: actionType, payload: payload, verifyType: false)
            }
        } else {
            action = try app.decodeAction(actionType: actionType, payload: payload, verifyType: false)
        }
        if let reason = reject(state, action) { throw ActionError(reason) }
        let effect = reducer(&state, action, environment, stamp)
        return effect.hasWork ? PendingEffects(effect, send: send, schedulesFrom: stamp.time) : PendingEffects.none
    }

    func takeChanges() throws -> [UInt8]? { try ChangeTracking.take(&state, codec: codec) }
    func forgetChanges() { ChangeTracking.forget(&state) }
    func encodedSnapshot() throws -> [UInt8] { try encodedState() }
    func loadSnapshot(_ bytes: [UInt8]) throws { try loadState(bytes) }
}

/// What an app's runtime is beyond its own `reduce` and snapshot: a state in the wire's codec and the
/// effects it started. `FluxAppRuntime` and `DependentRuntime` are both one, and share here the rest
/// of ``AppRuntime`` but `takeChanges()` and `forgetChanges()`: those stay in each class, because
/// reaching `state` in place through this protocol costs a debug build an allocation per call
/// (zflux-allocations counts it).
protocol StatefulRuntime: AppRuntime {
    associatedtype State: Codable & Sendable
    /// The state this runtime publishes.
    var state: State { get set }
    /// The effects ``AppRuntime/apply(app:actionType:payload:stamp:runEffects:)`` started.
    var tasks: EffectTasks { get }
    /// What the state and its changes are written in.
    var codec: WireCodec { get }
}

extension StatefulRuntime {
    func apply(app name: String, actionType: String, payload: [UInt8], stamp: Stamp, runEffects: Bool) throws(ActionError) -> Bool {
        guard let effects = try reduce(app: name, actionType: actionType, payload: payload, stamp: stamp) else { return false }
        if runEffects { tasks.run(effects) }
        return true
    }

    func encodedState() throws -> [UInt8] { try codec.encode(state) }
    func loadState(_ bytes: [UInt8]) throws {
        state = try codec.decode(State.self, from: bytes)
        forgetChanges()
    }
    var effectsInFlight: Int { tasks.inFlight }
    func cancelEffects() { tasks.cancelAll() }
}

final class FluxStateReplica<State: Codable & Sendable>: TypedStateReplica {
    var state: State
    let codec: WireCodec

    init(initial: State, codec: WireCodec) {
        state = initial
        self.codec = codec
    }

    func load(_ bytes: [UInt8]) throws { state = try codec.decode(State.self, from: bytes) }

    func apply(changes bytes: [UInt8]) throws {
        guard try ChangeTracking.apply(bytes, to: &state) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(State.self) does not take changes-only updates"))
        }
    }

    func encodedState() throws -> [UInt8] { try codec.encode(state) }

    var typedState: any Sendable { state }
}

/// Reaches a state's `IncrementalState` conformance from code that is generic over any state, in place
/// (no copy of the state: a copy of a large collection is exactly the cost changes-only updates avoid).
enum ChangeTracking {
    fileprivate enum Opener<S> {}
    fileprivate protocol Opening {
        static func take(_ state: UnsafeMutableRawPointer, codec: WireCodec) throws -> [UInt8]
        static func apply(_ bytes: [UInt8], _ state: UnsafeMutableRawPointer) throws
        static func forget(_ state: UnsafeMutableRawPointer)
    }

    /// The encoded changes of `state`, clearing its record; nil when `S` does not track changes.
    static func take<S>(_ state: inout S, codec: WireCodec) throws -> [UInt8]? {
        guard let opener = Opener<S>.self as? any Opening.Type else { return nil }
        return try withUnsafeMutablePointer(to: &state) { try opener.take(UnsafeMutableRawPointer($0), codec: codec) }
    }

    /// Applies encoded changes to `state`; false when `S` does not track changes.
    static func apply<S>(_ bytes: [UInt8], to state: inout S) throws -> Bool {
        guard let opener = Opener<S>.self as? any Opening.Type else { return false }
        try withUnsafeMutablePointer(to: &state) { try opener.apply(bytes, UnsafeMutableRawPointer($0)) }
        return true
    }

    /// Clears `state`'s record of changes without encoding them (after a whole state was published or
    /// loaded, the record can be as large as the state).
    static func forget<S>(_ state: inout S) {
        guard let opener = Opener<S>.self as? any Opening.Type else { return }
        withUnsafeMutablePointer(to: &state) { opener.forget(UnsafeMutableRawPointer($0)) }
    }
}

extension ChangeTracking.Opener: ChangeTracking.Opening where S: IncrementalState {
    static func take(_ state: UnsafeMutableRawPointer, codec: WireCodec) throws -> [UInt8] {
        try codec.encode(state.assumingMemoryBound(to: S.self).pointee.takeChanges())
    }

    static func apply(_ bytes: [UInt8], _ state: UnsafeMutableRawPointer) throws {
        let changes = try WireCodec().decode(S.Changes.self, from: bytes)
        state.assumingMemoryBound(to: S.self).pointee.apply(changes)
    }

    static func forget(_ state: UnsafeMutableRawPointer) {
        _ = state.assumingMemoryBound(to: S.self).pointee.takeChanges()
    }
}

/// An app whose dispatches the intake may take as they are, checked in place in the bytes they came
/// in (a DISPATCH-BATCH's), with no copy of their payloads: ``FluxApp`` without `validate` or middleware.
package protocol AdmitsInPlace {
    /// Whether the payload in `range` of `payload` is taken as it is: a binary payload that names a case
    /// of the catalog and holds together. One that does not decode as the app's action after all is
    /// refused by its stores, each the same way (REJECTED).
    func takesAsIs(actionType: String, payload: [UInt8], in range: Range<Int>) -> Bool
}

extension FluxApp: AdmitsInPlace {
    package func takesAsIs(actionType: String, payload: [UInt8], in range: Range<Int>) -> Bool {
        !validates && middleware.isEmpty && catalogTypes.contains(actionType)
            && BinaryPayloadCodec.firstKey(of: payload, in: range, is: actionType) && BinaryPayloadCodec.isWellFormed(payload, in: range)
    }
}

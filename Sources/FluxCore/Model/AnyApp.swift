import Foundation

/// An app with its types erased, so nodes and the CLI can host any app by name.
public protocol AnyApp: Sendable {
    var name: String { get }
    var codec: any PayloadCodec { get }
    /// Decodes and validates a wire action; the dispatcher NACKs with the error's reason.
    func check(actionType: String, payload: [UInt8]) throws(ActionError)
    /// Turns a case name and JSON arguments (from the CLI) into a checked wire payload.
    func wirePayload(type: String, argumentsJSON: [UInt8]) throws(ActionError) -> [UInt8]
    /// A fresh instance of the app's state machine, owned by one store thread.
    func makeRuntime() -> any AppRuntime
    /// The state (wire bytes) as JSON for people and scripts.
    func stateJSON(fromWire bytes: [UInt8]) throws -> [UInt8]
    /// The state (wire bytes) rendered as plain text.
    func render(wire bytes: [UInt8]) throws -> String
}

/// One app's live state machine inside a store: not shared between threads.
public protocol AppRuntime: AnyObject {
    /// Applies a wire action. Returns the effect's actions runner (nil when there is nothing to run),
    /// already bound to the app's environment; each action it sends arrives as (case name, payload).
    func apply(actionType: String, payload: [UInt8]) throws(ActionError) -> (@Sendable (@escaping @Sendable (String, [UInt8]) -> Void) async -> Void)?
    /// The whole state in wire bytes.
    func encodedState() throws -> [UInt8]
    /// Replaces the state from wire bytes (snapshots).
    func loadState(_ bytes: [UInt8]) throws
}

extension FluxApp: AnyApp {
    public var codec: any PayloadCodec { JSONPayloadCodec() }

    func decodeAction(actionType: String, payload: [UInt8]) throws(ActionError) -> Action {
        let action: Action
        do {
            action = try codec.decode(Action.self, from: payload)
        } catch let error as DecodingError {
            // Synthesized enum decoding fails at the top level only when no case matches the key;
            // errors inside the arguments carry a path that starts with the case name.
            if case .dataCorrupted = error, (try? JSONSerialization.jsonObject(with: Data(payload))) == nil {
                throw ActionError("the payload of \(name).\(actionType) is not valid JSON")
            }
            if error.codingPath.isEmpty {
                throw ActionError("\(name) has no action '\(actionType)'")
            }
            throw ActionError("bad arguments for \(name).\(actionType): \(error.shortDescription)")
        } catch {
            throw ActionError("cannot decode \(name).\(actionType): \(error)")
        }
        let decodedType = ActionCoding.caseName(of: action)
        guard decodedType == actionType else {
            throw ActionError("\(name) has no action '\(actionType)'")
        }
        return action
    }

    public func check(actionType: String, payload: [UInt8]) throws(ActionError) {
        let action = try decodeAction(actionType: actionType, payload: payload)
        if let reason = validate(action) { throw ActionError(reason) }
    }

    public func wirePayload(type: String, argumentsJSON: [UInt8]) throws(ActionError) -> [UInt8] {
        let json = try ActionCoding.json(type: type, arguments: argumentsJSON)
        // The JSON form is the wire form while JSON is the wire codec; check it all the same.
        try check(actionType: type, payload: json)
        return json
    }

    public func makeRuntime() -> any AppRuntime { FluxAppRuntime(app: self) }

    public func stateJSON(fromWire bytes: [UInt8]) throws -> [UInt8] {
        try JSONPayloadCodec().encode(try codec.decode(State.self, from: bytes))
    }

    public func render(wire bytes: [UInt8]) throws -> String {
        render(try codec.decode(State.self, from: bytes))
    }
}

final class FluxAppRuntime<State, Action, Environment>: AppRuntime
where State: Codable & Equatable & Sendable, Action: Codable & Sendable, Environment: Sendable {
    let app: FluxApp<State, Action, Environment>
    var state: State

    init(app: FluxApp<State, Action, Environment>) {
        self.app = app
        self.state = app.initialState
    }

    func apply(actionType: String, payload: [UInt8]) throws(ActionError) -> (@Sendable (@escaping @Sendable (String, [UInt8]) -> Void) async -> Void)? {
        let action = try app.decodeAction(actionType: actionType, payload: payload)
        let effect = app.reducer(&state, action, app.environment)
        if effect.isNone { return nil }
        let codec = app.codec
        return { deliver in
            await effect.run(send: Send { action in
                guard let bytes = try? codec.encode(action) else { return }
                deliver(ActionCoding.caseName(of: action), bytes)
            })
        }
    }

    func encodedState() throws -> [UInt8] { try app.codec.encode(state) }

    func loadState(_ bytes: [UInt8]) throws { state = try app.codec.decode(State.self, from: bytes) }
}

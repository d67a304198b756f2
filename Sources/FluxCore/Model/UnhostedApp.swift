/// An app known only by its name: one of a cluster's apps that this binary does not host (a user's own
/// app, reached with the stock `zflux`).
///
/// Without the app's Swift types this binary still reads everything of it on the wire, since binary
/// states and actions are self-describing: ``stateJSON(fromWire:)`` and ``actionJSON(fromWire:)`` print
/// them exactly as the app itself would (through ``GenericJSON``), and ``render(wire:)`` indents that.
/// It sends actions as JSON built from a case name and arguments, and leaves judging them to the
/// dispatcher, which hosts the app: ``check(actionType:payload:)`` accepts anything.
///
/// What needs the app's code is refused: admitting actions (``admit(actionType:payload:client:origin:host:)``),
/// running its reducer (the runtime from ``makeRuntime(format:deliver:)``), and applying changes-only
/// updates (the replica from ``makeReplica(format:)`` keeps whole states only, so a view following it
/// asks for a snapshot whenever changes come).
public struct UnhostedApp: AnyApp {
    public let name: String

    /// The app called `name`, hosted by another binary.
    public init(name: String) { self.name = name }

    /// Not known here; the dispatcher and stores that host the app know.
    public var reads: [String] { [] }

    /// Accepts any payload: without the app's types nothing can be checked here, and the dispatcher,
    /// which hosts the app, NACKs what its app refuses.
    public func check(actionType: String, payload: [UInt8]) throws(ActionError) {}

    /// Refuses: only a binary that hosts the app can decode, validate and run its middleware.
    public func admit(
        actionType: String, payload: [UInt8], client: UInt64, origin: ActionOrigin, host: any MiddlewareHost
    ) throws(ActionError) -> [UInt8] {
        throw notHosted
    }

    /// The name only: the app's summary and actions live in the binary that hosts it.
    public func describe() -> AppDescription {
        AppDescription(
            name: name, summary: "not hosted by this binary: its actions are sent as JSON and checked by the dispatcher", reads: [],
            actions: [])
    }

    /// `{"<type>":<arguments>}`, in JSON whatever `format` asks for. The binary codec needs the app's
    /// types to choose its tags (whether `1` is an `Int`, a `UInt` or a `Double`, what an enum's cases
    /// hold), and JSON does not; every node reads both codecs (``WireCodec`` tells them apart by the
    /// first byte), so the dispatcher decodes this payload with the app's real types.
    public func wirePayload(type: String, argumentsJSON: [UInt8], format: WireCodec.Format) throws(ActionError) -> [UInt8] {
        try ActionCoding.json(type: type, arguments: argumentsJSON)
    }

    /// A runtime that cannot run the app: applying one of its actions throws, and its state is an empty
    /// object.
    public func makeRuntime(format: WireCodec.Format, deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) -> any AppRuntime {
        UnhostedRuntime(name: name, codec: WireCodec(format))
    }

    /// The state (either codec) as the app itself prints it with ``JSONPayloadCodec``, but its dates as
    /// numbers (seconds since 2001): without the app's types nothing says a number is a date.
    public func stateJSON(fromWire bytes: [UInt8]) throws -> [UInt8] { try GenericJSON.json(fromWire: bytes) }

    /// The state as indented JSON (the app's own rendering lives in the binary that hosts it).
    public func render(wire bytes: [UInt8]) throws -> String { try GenericJSON.prettyText(fromWire: bytes) }

    /// The action (either codec) as the app itself prints it with ``JSONPayloadCodec``, dates as numbers.
    public func actionJSON(fromWire bytes: [UInt8]) throws -> [UInt8] { try GenericJSON.json(fromWire: bytes) }

    /// A replica that keeps the last whole state's bytes as they came, and refuses changes-only updates
    /// (a view then asks for a whole snapshot). Until a state loads it holds an empty object.
    public func makeReplica(format: WireCodec.Format) -> any StateReplica { UnhostedReplica(name: name, codec: WireCodec(format)) }

    var notHosted: ActionError { ActionError("app \(name) is not hosted by this binary") }
}

/// The wire bytes of `{}` in `codec`.
private func emptyObject(_ codec: WireCodec) -> [UInt8] {
    (try? codec.encode([String: Int]())) ?? Array("{}".utf8)
}

/// ``UnhostedApp``'s runtime: it holds no state it could change, so every action of its app is refused.
final class UnhostedRuntime: AppRuntime {
    let name: String
    let codec: WireCodec

    init(name: String, codec: WireCodec) {
        self.name = name
        self.codec = codec
    }

    func reduce(app: String, actionType: String, payload: [UInt8], stamp: Stamp) throws(ActionError) -> PendingEffects? {
        // Other apps' actions are offered to every runtime: they change nothing here.
        guard app == name else { return nil }
        throw ActionError("app \(name) is not hosted by this binary")
    }

    func apply(app: String, actionType: String, payload: [UInt8], stamp: Stamp, runEffects: Bool) throws(ActionError) -> Bool {
        try reduce(app: app, actionType: actionType, payload: payload, stamp: stamp) != nil
    }

    func encodedState() throws -> [UInt8] { emptyObject(codec) }
    func takeChanges() throws -> [UInt8]? { nil }
    func forgetChanges() {}

    func loadState(_ bytes: [UInt8]) throws {
        throw ActionError("app \(name) is not hosted by this binary: its state cannot be loaded")
    }

    func encodedSnapshot() throws -> [UInt8] { try encodedState() }
    func loadSnapshot(_ bytes: [UInt8]) throws { try loadState(bytes) }
    var effectsInFlight: Int { 0 }
    func cancelEffects() {}
}

/// ``UnhostedApp``'s replica: the last whole state, kept as its bytes.
final class UnhostedReplica: StateReplica {
    let name: String
    var state: [UInt8]

    init(name: String, codec: WireCodec) {
        self.name = name
        self.state = emptyObject(codec)
    }

    func load(_ bytes: [UInt8]) throws { state = bytes }

    func apply(changes bytes: [UInt8]) throws {
        throw ActionError("app \(name) is not hosted by this binary: a changes-only update cannot be applied, a whole state is needed")
    }

    func encodedState() throws -> [UInt8] { state }
}

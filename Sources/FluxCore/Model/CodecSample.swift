/// A value `zflux bench codec` encodes and decodes in both wire codecs: a state or an action of one of
/// a binary's apps, at a size worth knowing.
public struct CodecSample: Sendable {
    /// What the table calls it (`todo state, 1000 items`).
    public var name: String
    /// Encodes the value with a codec.
    public let encode: @Sendable (WireCodec) throws -> [UInt8]
    /// Decodes bytes as the value's type with a codec, discarding the result.
    public let decode: @Sendable (WireCodec, [UInt8]) throws -> Void

    public init<Value: Codable & Sendable>(_ name: String, _ value: Value) {
        self.name = name
        encode = { codec in try codec.encode(value) }
        decode = { codec, bytes in _ = try codec.decode(Value.self, from: bytes) }
    }
}

/// One action a scripted driver (`zflux demo`) dispatches: its app, its case name and its arguments as
/// a JSON object (empty: none).
public struct DemoStep: Sendable, Equatable {
    public var app: String
    public var type: String
    public var arguments: String

    public init(_ app: String, _ type: String, _ arguments: String = "") {
        self.app = app
        self.type = type
        self.arguments = arguments
    }
}

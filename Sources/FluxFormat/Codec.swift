import Foundation

/// Encodes payloads (actions, states). `WireCodec` is the one nodes use: it writes the binary codec
/// (or JSON, by configuration) and reads both; `JSONPayloadCodec` is what people read.
public protocol PayloadCodec: Sendable {
    var name: String { get }
    func encode<T: Encodable>(_ value: T) throws -> [UInt8]
    func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T
}

/// JSON with sorted keys: readable, and the same value always gives the same bytes.
public struct JSONPayloadCodec: PayloadCodec {
    public init() {}
    public var name: String { "json" }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}

extension DecodingError {
    /// The path to the value that could not be decoded.
    public var codingPath: [any CodingKey] {
        switch self {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c): c.codingPath
        @unknown default: []
        }
    }

    /// A one-line account of a decoding failure that names the field, for NACK reasons.
    public var shortDescription: String {
        func path(_ context: Context) -> String {
            let p = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return p.isEmpty ? "" : " at '\(p)'"
        }
        switch self {
        case .typeMismatch(let type, let c): return "expected \(type)\(path(c)): \(c.debugDescription)"
        case .valueNotFound(let type, let c): return "missing \(type) value\(path(c))"
        case .keyNotFound(let key, let c): return "missing field '\(key.stringValue)'\(path(c))"
        case .dataCorrupted(let c): return "malformed\(path(c)): \(c.debugDescription)"
        @unknown default: return "\(self)"
        }
    }
}

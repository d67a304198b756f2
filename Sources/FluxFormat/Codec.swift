import Foundation

/// Encodes payloads (actions, states). `WireCodec` is the one nodes use: it writes the binary codec
/// (or JSON, by configuration) and reads both; `JSONPayloadCodec` is what people read.
public protocol PayloadCodec: Sendable {
    var name: String { get }
    func encode<T: Encodable>(_ value: T) throws -> [UInt8]
    func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T
}

/// JSON with sorted keys: readable, and the same value always gives the same bytes.
///
/// A `Date` is written as people read it, an ISO 8601 text in UTC with every digit it holds
/// (`"2026-11-29T07:24:41.1234567Z"`, which reads back to the same `Date`), unless ``dates`` says
/// otherwise: the wire's JSON (``wire``) keeps `Date`'s own form, seconds since 2001, so that the bytes of
/// a cluster configured for JSON, and what nodes of an older version read, do not change. Either reads
/// both forms.
public struct JSONPayloadCodec: PayloadCodec {
    /// How a `Date` is written.
    public enum DateFormat: Sendable {
        /// ISO 8601, UTC, every digit: for people (`state`, `tail`, the devtools page, session files).
        case iso8601
        /// `Date`'s `Codable` form, seconds since 2001 as a number: the wire's JSON.
        case secondsSinceReferenceDate
    }

    public let dates: DateFormat

    /// Dates as ISO 8601 texts, for people.
    public init() { self.init(dates: .iso8601) }
    public init(dates: DateFormat) { self.dates = dates }

    /// The codec of a cluster configured for JSON (``WireCodec``): dates as numbers, as they always were.
    public static let wire = JSONPayloadCodec(dates: .secondsSinceReferenceDate)

    public var name: String { "json" }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if dates == .iso8601 {
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                // A date no year from 1 to 9999 holds stays a number, which reads back as well.
                if let text = DateText.string(date) { try container.encode(text) } else { try container.encode(date.timeIntervalSinceReferenceDate) }
            }
        }
        return Array(try encoder.encode(value))
    }

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            if let seconds = try? container.decode(Double.self) { return Date(timeIntervalSinceReferenceDate: seconds) }
            let text = try container.decode(String.self)
            guard let date = DateText.date(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "\"\(text)\" is not an ISO 8601 date (such as 2026-11-29T07:24:41.5Z) nor seconds since 2001")
            }
            return date
        }
        return try decoder.decode(type, from: Data(bytes))
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

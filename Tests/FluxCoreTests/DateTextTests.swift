import Examples
import FluxCore
import Foundation
import Testing

/// Dates as people read them (issue 58): an ISO 8601 text wherever a person reads a state or an
/// action, which reads back to the very same `Date`; the wire's JSON keeps the numbers it always held.
@Suite("Dates in JSON")
struct DateTextTests {
    struct Stamped: Codable, Equatable {
        var at: Date
    }

    /// `"YYYY-MM-DDTHH:MM:SS(.fraction)Z"`, quotes included.
    static func isISO(_ text: String) -> Bool { text.wholeMatch(of: #/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"/#) != nil }

    /// The JSON text of the date alone, as `JSONPayloadCodec` writes it.
    func text(_ date: Date, _ codec: JSONPayloadCodec = JSONPayloadCodec()) throws -> String {
        let json = String(decoding: try codec.encode(Stamped(at: date)), as: UTF8.self)
        return String(json.dropFirst(#"{"at":"#.count).dropLast())
    }

    @Test("a date is an ISO 8601 text in UTC with every digit it holds, and reads back to the same Date, bit for bit")
    func exactRoundTrip() throws {
        #expect(try text(Date(timeIntervalSince1970: 1_767_225_600.125)) == #""2026-01-01T00:00:00.125Z""#)
        #expect(try text(Date(timeIntervalSince1970: 0)) == #""1970-01-01T00:00:00Z""#)
        #expect(try text(Date(timeIntervalSinceReferenceDate: -1e9)) == #""1969-04-24T22:13:20Z""#)
        var generator = SystemRandomNumberGenerator()
        var dates = [0, 0.5, -0.25, 1.0 / 3, 817_205_081.123456789, 1e-7, -1e-7, 3e10, -6e10].map { Date(timeIntervalSinceReferenceDate: $0) }
        dates += (0..<20_000).map { _ in Date(timeIntervalSinceReferenceDate: Double.random(in: -6e10...2.5e11, using: &generator)) }
        dates += (0..<2_000).map { _ in Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1_000_000...1_000_000, using: &generator)) / 64) }
        for date in dates {
            let written = try text(date)
            // Within half a second before 2001 a date stays its number (DateText.string says why).
            let seconds = date.timeIntervalSinceReferenceDate
            #expect(
                Self.isISO(written) || (seconds > -0.5 && seconds < 0 && written == "\(seconds)"),
                "\(date.timeIntervalSinceReferenceDate) is written \(written)")
            let read = try JSONPayloadCodec().decode(Stamped.self, from: Array(#"{"at":\#(written)}"#.utf8)).at
            #expect(
                read.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern,
                "\(written) reads back as \(read.timeIntervalSinceReferenceDate), not \(date.timeIntervalSinceReferenceDate)")
        }
        // Agrees with Foundation's own reading, to its millisecond.
        let parsed = try #require(ISO8601DateFormatter.withFractionalSecondsForTest.date(from: "2031-07-04T12:34:56.789Z"))
        let ours = try JSONPayloadCodec().decode(Stamped.self, from: Array(#"{"at":"2031-07-04T12:34:56.789Z"}"#.utf8)).at
        #expect(abs(ours.timeIntervalSince(parsed)) < 0.001)
    }

    @Test(
        "what the wire holds does not change: the wire's JSON writes seconds since 2001 as before, and either codec reads those numbers, ISO texts, and texts a person types with an offset"
    )
    func wireUnchangedAndOldBytesRead() throws {
        let date = Date(timeIntervalSince1970: 1_767_225_600.125)
        #expect(try text(date, .wire) == "\(date.timeIntervalSinceReferenceDate)")
        #expect(try WireCodec(.json).encode(Stamped(at: date)) == JSONPayloadCodec.wire.encode(Stamped(at: date)))
        let old = Array(#"{"at":788918400.125}"#.utf8)
        for codec in [JSONPayloadCodec(), .wire] {
            #expect(try codec.decode(Stamped.self, from: old).at == date, "a journal or snapshot of before")
            #expect(try codec.decode(Stamped.self, from: Array(#"{"at":"2026-01-01T01:00:00.125+01:00"}"#.utf8)).at == date)
            #expect(try WireCodec(.json).decode(Stamped.self, from: Array(#"{"at":"2026-01-01T00:00:00.125Z"}"#.utf8)).at == date)
            #expect(throws: DecodingError.self) { try codec.decode(Stamped.self, from: Array(#"{"at":"yesterday"}"#.utf8)) }
        }
    }

    @Test("a hosted app's state and action print their dates as ISO 8601 texts (state, tail, devtools, session files), from either codec")
    func appsPrintDates() throws {
        let app = Food.app()
        let item = Food.Item(name: "Porridge", calories: 310, eatenAt: Date(timeIntervalSince1970: 1_767_225_600.125))
        let state = Food.State(user: "ada@example.com", rows: [Food.Row(item: item, eaten: "07:30")])
        for format in WireCodec.Format.allCases {
            let printed = String(decoding: try app.stateJSON(fromWire: try WireCodec(format).encode(state)), as: UTF8.self)
            #expect(printed.contains(#""eatenAt":"2026-01-01T00:00:00.125Z""#), "\(format): \(printed)")
            let action = String(
                decoding: try app.actionJSON(fromWire: try WireCodec(format).encode(Food.Action.listLoaded(items: [item]))), as: UTF8.self)
            #expect(action.contains(#""eatenAt":"2026-01-01T00:00:00.125Z""#), "\(format): \(action)")
        }
        // What a person types back, as printed, is the same action.
        let typed = try app.wirePayload(
            type: "listLoaded", argumentsJSON: Array(#"{"items":[{"name":"Porridge","calories":310,"eatenAt":"2026-01-01T00:00:00.125Z"}]}"#.utf8))
        #expect(try WireCodec().decode(Food.Action.self, from: typed) == .listLoaded(items: [item]))
    }
}

extension ISO8601DateFormatter {
    fileprivate static var withFractionalSecondsForTest: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}

import Foundation
import Testing

@testable import FluxCore
@testable import FluxFormat

/// docs/FORMAT.md gives the binary format by example, for clients in other languages: every row of its
/// table is checked here against the code, so the page cannot drift from what zflux writes and reads.
@Suite("The binary format's examples (docs/FORMAT.md)")
struct FormatDocTests {
    /// One row of the table: the Swift type, the payload's bytes and the value's JSON.
    struct Row {
        let line: Int
        let type: String
        let bytes: [UInt8]
        let json: String
    }

    /// The text between the first pair of backticks in a cell.
    static func code(_ cell: String) -> String? {
        let parts = cell.split(separator: "`", omittingEmptySubsequences: false)
        return parts.count >= 3 ? String(parts[1]) : nil
    }

    static func rows() throws -> [Row] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/FORMAT.md")
        let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
        return try lines.enumerated().compactMap { index, line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            // | value | `type` | `bytes` | `JSON` |: six pieces around five bars; the header and rule have no code.
            guard cells.count == 6, let type = code(cells[2]), let hex = code(cells[3]), let json = code(cells[4]) else { return nil }
            return Row(line: index + 1, type: type, bytes: try Hex.bytes(hex.replacingOccurrences(of: " ", with: "")), json: json)
        }
    }

    @Test("every row's bytes are what both encoders write, both decoders read, and the transcoder turns into its JSON")
    func rowsMatchTheCode() throws {
        let rows = try Self.rows()
        #expect(rows.count >= 16, "FORMAT.md's table reads as \(rows.count) rows")
        for row in rows {
            try ProtocolVectorTests.checkPayload("FORMAT.md line \(row.line) (\(row.type))", type: row.type, binary: row.bytes, json: row.json)
        }
    }

    @Test("the table has an integer of every width, a string, an optional, an array, a struct and an enum case")
    func coverage() throws {
        let types = Set(try Self.rows().map(\.type))
        let wanted: Set = [
            "Int8", "Int16", "Int32", "Int64", "Int", "UInt8", "UInt16", "UInt32", "UInt64", "String", "Int?", "[Int]", "Todo.State",
            "Counter.Action",
        ]
        #expect(wanted.subtracting(types).isEmpty, "FORMAT.md has no row of \(wanted.subtracting(types).sorted())")
    }
}

/// toml++ (inside TOMLKit) stops the process with an assertion on some table headers instead of
/// reporting an error: a name that starts with anything but a key character or a quote (`[= "x"]`,
/// `[.a]`), an empty one (`[` and the line's end), and an array-of-tables header whose name starts with
/// a bracket (`[[ [x] ]]`). Found by the config fuzz test and a hostile review. Every TOML text zflux
/// reads (cluster configs and workload files) passes through this guard first, which refuses such a
/// header with its line. libFuzzer's `config` and `workload` targets (scripts/fuzz.sh) run toml++
/// itself behind this guard; they found the CR inside a header (`[\r[x]]`) and a header after a byte-order mark.
///
/// The text is read as UTF-8 bytes split on LF, with CR counted as blank: Swift's `Character` reads
/// CRLF as one character, so a guard that split a `String` on `"\n"` saw a CRLF file as one line.
package enum TOMLHeaderGuard {
    /// The 1-based line and the reason of the first header toml++ would abort on, or nil.
    package static func firstUnsafeHeader(in text: String) -> (line: Int, reason: String)? {
        var line = 1
        let bytes = text.utf8
        // toml++ skips a byte-order mark at the start, so the first line's header begins after it.
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.index(bytes.startIndex, offsetBy: 3) : bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            if let reason = unsafeHeader(bytes[start..<end]) { return (line, reason) }
            line += 1
            start = end < bytes.endIndex ? bytes.index(after: end) : end
        }
        return nil
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }

    private static func unsafeHeader(_ line: Substring.UTF8View.SubSequence) -> String? {
        var rest = line.drop(while: isBlank)
        guard rest.first == UInt8(ascii: "[") else { return nil }
        rest = rest.dropFirst()
        let array = rest.first == UInt8(ascii: "[")
        if array { rest = rest.dropFirst() }
        // Inside a header toml++ skips spaces and tabs only: a CR there reaches its key parser and aborts it.
        rest = rest.drop { $0 == 0x20 || $0 == 0x09 }
        let reason = "a table name must start with a letter, digit, '_', '-' or a quote"
        guard let first = rest.first else { return reason }
        let keyStart =
            (first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z")) || (first >= UInt8(ascii: "A") && first <= UInt8(ascii: "Z"))
            || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) || first == UInt8(ascii: "_") || first == UInt8(ascii: "-")
            || first == UInt8(ascii: "\"") || first == UInt8(ascii: "'") || first == UInt8(ascii: "]")
        // toml++ reports `[ [x] ]` itself; after `[[`, a second opening bracket aborts it.
        return keyStart || (!array && first == UInt8(ascii: "[")) ? nil : reason
    }
}

import Foundation

/// What a node's log says of its last crash: the Swift runtime prints a trap's message on stderr
/// (`Drill.swift:24: Fatal error: …` in a debug build, `Fatal error: …` or a failed precondition in
/// a release one), and the supervisor appends a node's stderr to its log. A store that asks for an
/// action to be quarantined names it in its reason, so that `quarantine list` says why without a
/// search through the log.
package enum CrashLog {
    /// The most of a log's end that is read.
    static let tailBytes = 64 << 10
    /// The most of a line that is kept.
    static let maxLineLength = 300

    /// The trap's line in the log at `path`, written after the last line holding `runStarted` (what the
    /// run that crashed logged as it started; the whole end read when there is none): the runtime's
    /// message if it printed one (`Fatal error`, `Precondition failed`, `Assertion failed`), else the
    /// crash's own line (`Program crashed: Illegal instruction …`, a trap without a message, such as an
    /// arithmetic overflow in a release build). Nil when the file cannot be read or says neither.
    package static func lastTrap(log path: String, after runStarted: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd() else { return nil }
        try? handle.seek(toOffset: size > UInt64(tailBytes) ? size - UInt64(tailBytes) : 0)
        guard let data = try? handle.readToEnd() else { return nil }
        var lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
        // One run's output: its report's headline comes first (a symbolicated report names the
        // failure again in its frames). Without the run's start, the newest report's line.
        let start = lines.lastIndex { $0.contains(runStarted) }
        if let start { lines = Array(lines[(start + 1)...]) }
        let pick = { (matches: (Substring) -> Bool) in start == nil ? lines.last(where: matches) : lines.first(where: matches) }
        let messages = ["Fatal error", "Precondition failed", "Assertion failed", "Swift runtime failure"]
        let found =
            pick { line in messages.contains { line.contains($0) } }
            ?? pick { $0.contains("Program crashed:") || $0.contains("Illegal instruction") }
        guard let found else { return nil }
        let line = found.trimmingCharacters(in: CharacterSet(charactersIn: " *")).unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }
        let text = String(String.UnicodeScalarView(line))
        precondition(!text.isEmpty || line.isEmpty)
        return text.count > maxLineLength ? String(text.prefix(maxLineLength)) + "…" : text
    }
}

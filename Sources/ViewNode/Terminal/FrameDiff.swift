/// What to write to a terminal to turn the frame on it into the next one: only the rows that changed,
/// each rewritten in place (cursor to the row, the row, nothing else), so nothing flickers.
public enum FrameDiff {
    public static func output(from previous: [String]?, to next: [String]) -> String {
        var out = ""
        // No previous frame: every row is new.
        let previous = previous ?? []
        for (row, line) in next.enumerated() where row >= previous.count || previous[row] != line {
            out += "\u{1B}[\(row + 1);1H" + line
        }
        if previous.count > next.count {
            for row in next.count..<previous.count { out += "\u{1B}[\(row + 1);1H\u{1B}[2K" }
        }
        return out
    }
}

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

/// The body of a view's last frame, kept for the redraw once a second that only moves the status
/// bar's clock ("updated 3 s ago"): with nothing new (no update, key or outcome) and the same size,
/// the kept lines are drawn again and the screen is not asked to render, so an idle view decodes no
/// state and builds no lines.
struct KeptBody {
    private var kept: (width: Int, room: Int, lines: Frame)?

    /// The body for a frame `width` wide with `room` lines: `render()`'s, unless nothing `changed` and
    /// the size is the kept one's.
    mutating func frame(width: Int, room: Int, changed: Bool, render: () -> Frame) -> Frame {
        if !changed, let kept, kept.width == width, kept.room == room { return kept.lines }
        let lines = render()
        kept = (width, room, lines)
        return lines
    }
}

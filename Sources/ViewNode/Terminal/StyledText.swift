/// Text with a style per run, rendered with ANSI colours or without (NO_COLOR, or not a terminal).
public struct StyledLine: Equatable, Sendable, ExpressibleByStringLiteral {
    public enum Style: Equatable, Sendable {
        case plain, bold, dim, inverse, highlight, good, bad, accent
    }

    public struct Run: Equatable, Sendable {
        public var text: String
        public var style: Style
    }

    public var runs: [Run]

    public init(_ runs: [Run] = []) { self.runs = runs }
    public init(_ text: String, _ style: Style = .plain) { runs = [Run(text: text, style: style)] }
    public init(stringLiteral value: String) { self.init(value) }

    public static func + (lhs: StyledLine, rhs: StyledLine) -> StyledLine { StyledLine(lhs.runs + rhs.runs) }

    /// The characters a person sees.
    public var plainText: String { runs.map(\.text).joined() }

    /// The line cut or padded to exactly `width` columns (one column per character), with ANSI styles
    /// when `colour` is on.
    public func rendered(width: Int, colour: Bool) -> String {
        var out = ""
        var used = 0
        for run in runs where used < width {
            let text = String(run.text.prefix(width - used))
            used += text.count
            if colour && run.style != .plain {
                out += StyledLine.code(run.style) + text + "\u{1B}[0m"
            } else {
                out += text
            }
        }
        return out + String(repeating: " ", count: max(0, width - used))
    }

    /// The line cut or padded with spaces to `width` characters, styles kept.
    public func padded(to width: Int) -> StyledLine {
        var runs: [Run] = []
        var used = 0
        for run in self.runs where used < width {
            let text = String(run.text.prefix(width - used))
            used += text.count
            runs.append(Run(text: text, style: run.style))
        }
        if used < width { runs.append(Run(text: String(repeating: " ", count: width - used), style: .plain)) }
        return StyledLine(runs)
    }

    static func code(_ style: Style) -> String {
        switch style {
        case .plain: "\u{1B}[0m"
        case .bold: "\u{1B}[1m"
        case .dim: "\u{1B}[2m"
        case .inverse: "\u{1B}[7m"
        case .highlight: "\u{1B}[1;33m"
        case .good: "\u{1B}[32m"
        case .bad: "\u{1B}[31m"
        case .accent: "\u{1B}[36m"
        }
    }
}

/// A whole screen: one styled line per row.
public typealias Frame = [StyledLine]

import NodeSupport

/// `/` filtering for list screens (`zflux top`, the full-screen `zflux tail`): `/` opens a prompt,
/// Enter applies what was typed, Esc cancels (or, with no prompt open, clears the filter). Matching
/// is a case-insensitive substring.
public struct FilterPrompt: Equatable, Sendable {
    public private(set) var filter = ""
    /// The text being typed, while the prompt is open.
    public private(set) var editing: String?

    public init() {}

    /// Reacts to a key; returns whether the prompt took it.
    public mutating func handle(_ key: Key) -> Bool {
        if let text = editing {
            switch key {
            case .enter:
                filter = text
                editing = nil
            case .escape: editing = nil
            case .backspace: editing = String(text.dropLast())
            case .character(let c): editing = text + String(c)
            default: return false
            }
            return true
        }
        switch key {
        case .character("/"):
            editing = filter
            return true
        case .escape where !filter.isEmpty:
            filter = ""
            return true
        default:
            return false
        }
    }

    public func matches(_ text: String) -> Bool { filter.isEmpty || text.lowercased().contains(filter.lowercased()) }

    /// The prompt while typing, else the filter in force (nil: none).
    public var line: StyledLine? {
        if let editing { return StyledLine("/", .accent) + StyledLine(editing + "▏") }
        return filter.isEmpty ? nil : StyledLine("filter: \(filter)  (/ change · Esc clear)", .accent)
    }
}

/// The keys of a list screen (`zflux top`, the full-screen `zflux tail`): `/` filters, `?` or F1
/// opens the key help (any key closes it), `q` quits.
public struct ListKeys: Equatable, Sendable {
    public var prompt = FilterPrompt()
    public var showingHelp = false
    public static let help = "/ filter · Esc clear filter · ? keys · q quit"

    public init() {}

    /// Reacts to a key; returns true when it asks to quit.
    public mutating func handle(_ key: Key) -> Bool {
        if showingHelp {
            showingHelp = false
            return false
        }
        if prompt.handle(key) { return false }
        if key == .character("?") || key == .f1 { showingHelp = true }
        return key == .character("q")
    }

    /// The help overlay, or `body` when it is closed.
    public func frame(title: String, _ body: () -> Frame) -> Frame {
        showingHelp ? HelpOverlay.frame(title: "Keys of \(title)", help: ListKeys.help, global: ["Ctrl-C quit"]) : body()
    }
}

/// The full-screen `zflux tail` (or a team's binary's `tail`): the newest lines that pass the filter,
/// bottom up.
public struct TailScreen: Sendable {
    public private(set) var lines: [String] = []
    public var keys = ListKeys()
    /// The command, by the name of the binary that runs it: `zflux tail`, or a team's own `poll tail`.
    public let command: String
    static let capacity = 10_000

    /// `program`: the binary's name, which titles the screen and its key help.
    public init(program: String = StandardOutput.programName) {
        command = program + " tail"
    }

    /// The title line: the command and the filters it was started with.
    public func title(app: String?, type: String?) -> String {
        " " + command + (app.map { " · app \($0)" } ?? "") + (type.map { " · type \($0)" } ?? "")
    }

    public mutating func append(_ line: String) {
        lines.append(line)
        if lines.count > TailScreen.capacity + TailScreen.capacity / 4 { lines.removeFirst(lines.count - TailScreen.capacity) }
    }

    public func frame(title: String, width: Int, height: Int) -> Frame {
        keys.frame(title: command) {
            let footer: Frame = [keys.prompt.line ?? "", StyledLine(ListKeys.help, .dim)]
            let room = max(0, height - 1 - footer.count)
            let shown = lines.filter(keys.prompt.matches).suffix(room).map { StyledLine($0) }
            var frame: Frame = [StyledLine(title, .bold)] + shown
            while frame.count < height - footer.count { frame.append("") }
            return frame + footer
        }
    }
}

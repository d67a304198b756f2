import FluxCore
import Foundation
import ViewNode

/// `zflux view STORE --history`: a store's timeline beside its screen, the Redux DevTools way but
/// across processes. The global seq is the time axis: each step is an action of the store's app, or
/// any action that changed its state, with the state it left. ←/→ step, PgUp/PgDn ten, Home/End the
/// ends, `g` jumps to a seq, `/` filters by app or type, `L` goes back to live.
///
/// The steps are rebuilt from the journal (``Rewind``) when the browser opens; the model is plain
/// data, so tests drive it without a terminal.
public final class HistoryBrowser: ScreenMode {
    public struct Step: Equatable, Sendable {
        public var seq: UInt64
        public var app: String
        public var type: String
        public var client: UInt64
        public var timeNanoseconds: Int64
        /// The arguments as JSON text.
        public var payload: String
        /// The store's state after the action (JSON).
        public var state: Data
        /// Whether the action changed the state (a refused or foreign one does not).
        public var changed: Bool

        public init(
            seq: UInt64, app: String, type: String, client: UInt64, timeNanoseconds: Int64, payload: String, state: Data, changed: Bool
        ) {
            self.seq = seq
            self.app = app
            self.type = type
            self.client = client
            self.timeNanoseconds = timeNanoseconds
            self.payload = payload
            self.state = state
            self.changed = changed
        }
    }

    enum Prompt: Equatable {
        case jump(String)
        case filter(String)
    }

    public let store: String
    var screen: any StoreScreen
    /// The state before the first step.
    public let base: Data
    public let baseVersion: UInt64
    public let steps: [Step]
    /// Indexes into `steps` that pass the filter, oldest first.
    public private(set) var visible: [Int]
    /// Position in `visible`.
    public private(set) var cursor: Int
    public private(set) var filter = ""
    var prompt: Prompt?
    var message: StyledLine?

    public init(store: String, screen: any StoreScreen, base: Data, baseVersion: UInt64, steps: [Step]) {
        self.store = store
        self.screen = screen
        self.base = base
        self.baseVersion = baseVersion
        self.steps = steps
        visible = Array(steps.indices)
        cursor = max(0, steps.count - 1)
    }

    /// The step under the cursor (nil: no step passes the filter).
    public var current: Step? { visible.isEmpty ? nil : steps[visible[cursor]] }

    /// Reads the last `window` actions of the journal (or all, if fewer) into a browser of `store`.
    public static func load(rewind: Rewind, store: Rewind.StoreSpec, screen: any StoreScreen, window: UInt64 = 2000) throws -> HistoryBrowser {
        let head = rewind.head
        var from = head > window ? head - window : 0
        from = max(from, rewind.journal.firstSeq > 1 ? rewind.journal.firstSeq - 1 : 0)
        let replicas = try rewind.replicas([store], at: from)
        guard let replica = replicas.first else { throw RewindError("no store '\(store.name)'") }
        // The replica may start from a snapshot newer than `from`: the timeline starts where it does.
        let base = Data(try replica.stateJSON())
        let baseVersion = replica.version
        var steps: [Step] = []
        let apps = [store.app.name: store.app]
        try rewind.advance(replicas, through: head) { action, changed in
            let mine = !changed.isEmpty
            guard mine || action.topicString == store.app.name else { return }
            let payload = Rewind.readablePayload(action, apps: apps)
            steps.append(
                Step(
                    seq: action.header.seq, app: action.topicString, type: action.header.actionType, client: action.header.clientID,
                    timeNanoseconds: action.header.timestamp, payload: HistoryBrowser.text(payload), state: Data(try replica.stateJSON()),
                    changed: mine))
        }
        return HistoryBrowser(store: store.name, screen: screen, base: base, baseVersion: baseVersion, steps: steps)
    }

    // MARK: Keys

    public func handle(_ key: Key) -> ModeOutcome {
        if let prompt { return handle(key, in: prompt) }
        message = nil
        switch key {
        case .left, .up, .character("h"), .character("k"): move(by: -1)
        case .right, .down, .character("l"), .character("j"): move(by: 1)
        case .pageUp: move(by: -10)
        case .pageDown: move(by: 10)
        case .home: move(to: 0)
        case .end: move(to: visible.count - 1)
        case .character("g"): prompt = .jump("")
        case .character("/"): prompt = .filter(filter)
        case .character("L"), .escape: return .leave
        default: return .ignored
        }
        return .redraw
    }

    func handle(_ key: Key, in prompt: Prompt) -> ModeOutcome {
        switch (prompt, key) {
        case (_, .escape):
            self.prompt = nil
        case (.jump(let text), .enter):
            self.prompt = nil
            if let seq = UInt64(text) { jump(to: seq) }
        case (.jump(let text), .character(let c)) where c.isNumber:
            self.prompt = .jump(text + String(c))
        case (.jump(let text), .backspace):
            self.prompt = .jump(String(text.dropLast()))
        case (.filter(let text), .enter):
            self.prompt = nil
            apply(filter: text)
        case (.filter(let text), .character(let c)):
            self.prompt = .filter(text + String(c))
        case (.filter(let text), .backspace):
            self.prompt = .filter(String(text.dropLast()))
        default:
            return .ignored
        }
        return .redraw
    }

    func move(by delta: Int) { move(to: cursor + delta) }

    func move(to position: Int) {
        guard !visible.isEmpty else { return }
        cursor = min(max(0, position), visible.count - 1)
    }

    /// The cursor on the last visible step at or before `seq`.
    public func jump(to seq: UInt64) {
        guard let index = visible.lastIndex(where: { steps[$0].seq <= seq }) else {
            message = StyledLine("no step at or before seq \(seq) (the timeline starts after \(baseVersion))", .bad)
            return
        }
        cursor = index
        if steps[visible[index]].seq != seq {
            message = StyledLine("seq \(seq) is not a step of \(store): showing \(steps[visible[index]].seq)", .dim)
        }
    }

    /// Keeps the steps whose `app.type` contains `text` (case-insensitive); empty: all. The cursor
    /// stays on the same seq, or the nearest before it.
    public func apply(filter text: String) {
        let seq = current?.seq
        filter = text
        let needle = text.lowercased()
        visible = steps.indices.filter { needle.isEmpty || "\(steps[$0].app).\(steps[$0].type)".lowercased().contains(needle) }
        cursor = max(0, visible.count - 1)
        if let seq, let index = visible.lastIndex(where: { steps[$0].seq <= seq }) { cursor = index }
        if visible.isEmpty { message = StyledLine("no action matches '\(text)'", .bad) }
    }

    /// While a jump or filter prompt is open, keys are its text.
    public var takesText: Bool { prompt != nil }

    public var help: String {
        "←/→ step · PgUp/PgDn ten · Home/End ends · g jump to seq · / filter · L live · ? keys"
    }

    // MARK: Drawing

    public func render(width: Int, height: Int) -> Frame {
        let left = min(36, max(20, width / 3))
        let right = max(10, width - left - 3)
        var timeline: Frame = [StyledLine(filter.isEmpty ? "timeline" : "timeline /\(filter)", .bold)]
        let rows = max(1, height - 2)
        let start = max(0, min(cursor - rows / 2, visible.count - rows))
        for position in start..<min(visible.count, start + rows) {
            let step = steps[visible[position]]
            let text = String("\(step.seq)  \(step.app).\(step.type)".prefix(left - 2))
            timeline.append(
                position == cursor ? StyledLine("▶ " + text, .inverse) : StyledLine("  " + text, step.changed ? .plain : .dim))
        }
        if visible.isEmpty { timeline.append(StyledLine("  (nothing)", .dim)) }
        var detail: Frame = []
        if let step = current {
            let previous = visible[cursor] > 0 ? steps[visible[cursor] - 1].state : base
            detail.append(StyledLine("seq \(step.seq) · \(step.app).\(step.type)", .bold) + StyledLine(step.changed ? "" : "  (no change)", .dim))
            detail.append(StyledLine("client \(step.client) · \(HistoryBrowser.time(step.timeNanoseconds))", .dim))
            detail.append(StyledLine("payload " + step.payload))
            let diff = HistoryBrowser.diff(from: JSONValue.parse(previous) ?? .null, to: JSONValue.parse(step.state) ?? .null)
            for line in diff.prefix(6) { detail.append(line) }
            if diff.count > 6 { detail.append(StyledLine("  … \(diff.count - 6) more changes", .dim)) }
            detail.append(StyledLine(String(repeating: "─", count: 2) + " \(store) as of seq \(step.seq) ", .dim))
            detail += screen.render(state: step.state, previous: previous, width: right)
        } else {
            detail.append(StyledLine("no step to show", .dim))
        }
        if let prompt {
            switch prompt {
            case .jump(let text): detail.append(StyledLine("jump to seq: ", .accent) + StyledLine(text + "▏"))
            case .filter(let text): detail.append(StyledLine("filter (app or type): ", .accent) + StyledLine(text + "▏"))
            }
        } else if let message {
            detail.append(message)
        }
        var frame: Frame = []
        for row in 0..<min(height, max(timeline.count, detail.count)) {
            let a = row < timeline.count ? timeline[row] : ""
            let b = row < detail.count ? detail[row] : ""
            frame.append(a.padded(to: left) + StyledLine(" │ ", .dim) + b)
        }
        return frame
    }

    static func time(_ nanoseconds: Int64) -> String { Session.isoTime(nanoseconds) }

    static func text(_ value: JSONValue) -> String { String(decoding: value.jsonBytes, as: UTF8.self) }

    /// What changed between two states, a line per path: `~ path: old → new`, `+ path: value`,
    /// `- path: value`.
    public static func diff(from old: JSONValue, to new: JSONValue, path: String = "") -> [StyledLine] {
        if old == new { return [] }
        let here = path.isEmpty ? "(state)" : path
        switch (old, new) {
        case (.object(let a), .object(let b)):
            return Set(a.keys).union(b.keys).sorted().flatMap { key -> [StyledLine] in
                let child = path.isEmpty ? key : path + "." + key
                switch (a[key], b[key]) {
                case (nil, let added?): return [StyledLine("+ \(child): \(text(added))", .good)]
                case (let removed?, nil): return [StyledLine("- \(child): \(text(removed))", .bad)]
                case (let x?, let y?): return diff(from: x, to: y, path: child)
                default: return []
                }
            }
        case (.array(let a), .array(let b)):
            return diff(from: a, to: b, path: path)
        default:
            return [StyledLine("~ \(here): \(text(old)) → \(text(new))", .accent)]
        }
    }

    /// A list's changes as a sequence diff: an item inserted at the top is one `+` line, not every item
    /// shifted by one. Items that all have an `id` are matched by it, so an item that moved or changed
    /// keeps its identity; other items match when equal, and a lone removal and insertion at the same
    /// place is an item changed in place.
    static func diff(from a: [JSONValue], to b: [JSONValue], path: String) -> [StyledLine] {
        func id(_ value: JSONValue) -> JSONValue? {
            if case .object(let fields) = value { fields["id"] } else { nil }
        }
        let ids = !(a + b).isEmpty && (a + b).allSatisfy { id($0) != nil }
        // Same length and no identities: nothing was inserted or removed, only changed where it is.
        if !ids && a.count == b.count { return a.indices.flatMap { diff(from: a[$0], to: b[$0], path: "\(path)[\($0)]") } }
        let difference = ids ? b.difference(from: a) { id($0) == id($1) } : b.difference(from: a)
        var removed: [Int: JSONValue] = [:], inserted: [Int: JSONValue] = [:]
        for change in difference {
            switch change {
            case .remove(let offset, let element, _): removed[offset] = element
            case .insert(let offset, let element, _): inserted[offset] = element
            }
        }
        // Items both lists keep, in order: matched by identity (or equal), changed inside when they differ.
        var kept = Array(zip(a.indices.filter { removed[$0] == nil }, b.indices.filter { inserted[$0] == nil }))
        if !ids {
            for offset in removed.keys.sorted() where inserted[offset] != nil {
                kept.append((offset, offset))
                removed[offset] = nil
                inserted[offset] = nil
            }
        }
        var lines = removed.keys.sorted().map { StyledLine("- \(path)[\($0)]: \(text(a[$0]))", .bad) }
        for (old, new) in kept.sorted(by: { $0.1 < $1.1 }) { lines += diff(from: a[old], to: b[new], path: "\(path)[\(new)]") }
        lines += inserted.keys.sorted().map { StyledLine("+ \(path)[\($0)]: \(text(b[$0]))", .good) }
        return lines
    }
}

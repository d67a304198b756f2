import Foundation

/// What a key press asks for.
public enum KeyOutcome: Equatable, Sendable {
    /// Not for this screen.
    case ignored
    /// The screen's own state changed (selection, input): draw again.
    case redraw
    /// Dispatch an action: app, case name, arguments as a JSON object.
    case dispatch(app: String, type: String, arguments: String)
    /// Dispatch an action already encoded (a ``TypedScreen``'s action, in the binary codec).
    case send(app: String, type: String, payload: [UInt8])
    /// Nothing is sent; the status line shows why.
    case failed(String)
}

/// A full-screen view of one store: a pure function from the store's state (and the screen's own
/// input and selection) to lines, and what each key does.
public protocol StoreScreen {
    /// The body of the screen for `state` (the store's state as JSON); `previous` is the state before
    /// the last update, for highlighting what changed.
    func render(state: Data, previous: Data?, width: Int) -> Frame
    /// Reacts to a key; `state` is the store's current state as JSON.
    mutating func handle(_ key: Key, state: Data) -> KeyOutcome
    /// One line of key help for the bottom of the screen.
    var help: String { get }
    /// What to do when the store's state is first shown (SwiftUI's `onAppear`): load what the screen
    /// needs, say. Default: nothing.
    mutating func appeared(state: Data) -> KeyOutcome
    /// The store's state, once every dispatch of this view has reached it (or was refused): text
    /// fields drop their edit buffers and show the store's text again. Default: nothing.
    mutating func settled(state: Data)
    /// Whether printable keys are text being typed now (a focused text field): then `?` types a
    /// question mark, and F1 opens the key help instead. Default: false.
    var takesText: Bool { get }
}

extension StoreScreen {
    public mutating func appeared(state: Data) -> KeyOutcome { .ignored }
    public mutating func settled(state: Data) {}
    public var takesText: Bool { false }
}

/// A mode that takes a store's screen over for a while (the history browser): it gets the keys and
/// draws the body; the status line and status bar stay live around it.
public protocol ScreenMode: AnyObject {
    /// Reacts to a key.
    func handle(_ key: Key) -> ModeOutcome
    /// The body of the screen.
    func render(width: Int, height: Int) -> Frame
    /// One line of key help.
    var help: String { get }
    /// Whether printable keys are being typed into a prompt now (then `?` is text).
    var takesText: Bool { get }
}

/// What a key did in a ``ScreenMode``.
public enum ModeOutcome: Equatable, Sendable {
    case ignored, redraw
    /// Back to the live screen.
    case leave
}

/// The key help overlay (`?`): each "keys description" part of a help line on a row of its own.
public enum HelpOverlay {
    public static func frame(title: String, help: String, global: [String]) -> Frame {
        var frame: Frame = [StyledLine(title, .bold), ""]
        for part in help.components(separatedBy: " · ") + global {
            let words = part.split(separator: " ", maxSplits: 1).map(String.init)
            let keys = words.first ?? "", what = words.count > 1 ? words[1] : ""
            frame.append(StyledLine("  " + keys.padding(toLength: max(12, keys.count + 2), withPad: " ", startingAt: 0), .accent) + StyledLine(what))
        }
        frame.append("")
        frame.append(StyledLine("  ? or Esc closes this help", .dim))
        return frame
    }
}

/// A text field's edit buffer. While the view's own edits travel to the store, each key edits this
/// copy and each dispatch carries all of it, so keys typed (or pasted) faster than the store answers
/// build on each other instead of on a state that has not caught up yet. Once nothing of the view is
/// in flight (``StoreScreen/settled(state:)``) the field follows the store again, edits made
/// elsewhere included.
public struct EditBuffer: Equatable, Sendable {
    /// The text being edited; nil: none, the field shows the store's.
    public private(set) var editing: String?

    public init() {}

    /// What the field shows, given the store's text.
    public func text(store: String) -> String { editing ?? store }

    /// Applies an edit to the buffer (started from the store's text) and returns the new text.
    public mutating func edit(store: String, _ change: (inout String) -> Void) -> String {
        var text = editing ?? store
        change(&text)
        editing = text
        return text
    }

    /// Nothing of the view is in flight: follow the store.
    public mutating func follow() { editing = nil }
}

/// The screen for any store with no screen of its own: its state as a collapsible tree, with the
/// values that changed in the last update highlighted.
public struct StateTreeScreen: StoreScreen {
    public var tree = StateTree()
    public init() {}

    public func render(state: Data, previous: Data?, width: Int) -> Frame {
        tree.render(state, previous: previous)
    }

    public mutating func handle(_ key: Key, state: Data) -> KeyOutcome {
        switch key {
        case .up: tree.selected = max(0, tree.selected - 1)
        case .down: tree.selected = min(max(0, tree.rowCount(state) - 1), tree.selected + 1)
        case .enter, .character(" "): tree.toggle(state)
        default: return .ignored
        }
        return .redraw
    }

    public var help: String { "↑↓ select · Enter/Space collapse or expand · Ctrl-C quit" }
}

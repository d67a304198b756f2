import Foundation

/// What a key press asks for.
public enum KeyOutcome: Equatable, Sendable {
    /// Not for this screen.
    case ignored
    /// The screen's own state changed (selection, input): draw again.
    case redraw
    /// Dispatch an action: app, case name, arguments as a JSON object.
    case dispatch(app: String, type: String, arguments: String)
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
}

extension StoreScreen {
    public mutating func appeared(state: Data) -> KeyOutcome { .ignored }
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

import FluxCore
import Foundation
import NodeCores

/// What a key did on a ``TypedScreen``.
public enum ScreenOutcome<Action: Sendable>: Sendable {
    /// Not for this screen.
    case ignored
    /// The screen's own state changed (selection, input): draw again.
    case redraw
    /// Send `action` to the app's stores, through the dispatcher.
    case send(Action)
}

extension ScreenOutcome: Equatable where Action: Equatable {}

/// A screen written against its app's own `State` and `Action` types, as a SwiftUI or TCA view is:
/// `render(state:)` gets the state the view's replica holds, decoded with the app's codec (binary,
/// `@WireCodable` where the types have it), and a key answers `.send(.voteCast(option: "tea"))`.
/// No JSON on the way, in either direction.
///
/// ```swift
/// struct PollScreen: TypedScreen {
///     static let app = "poll"
///     var selected = 0
///     init() {}
///     func render(state: Poll.State, previous: Poll.State?, width: Int) -> Frame { … }
///     mutating func handle(_ key: Key, state: Poll.State) -> ScreenOutcome<Poll.Action> {
///         key == .enter ? .send(.voteCast(option: state.options[selected])) : .ignored
///     }
///     var help: String { "↑↓ choose · Enter vote" }
/// }
/// ```
///
/// A typed screen is an ``AppScreen`` like any other, registered the same way
/// (`ZFluxCLI.main(apps:screens:)`); the JSON requirements of ``StoreScreen`` are written for it from
/// the typed ones, for code that holds a state as JSON.
public protocol TypedScreen: AppScreen {
    /// The app's state type, as its reducer has it.
    associatedtype State: Codable & Sendable
    /// The app's action type.
    associatedtype Action: Codable & Sendable

    /// The body of the screen for `state`; `previous` is the state before the last update, for
    /// highlighting what changed.
    func render(state: State, previous: State?, width: Int) -> Frame
    /// Reacts to a key.
    mutating func handle(_ key: Key, state: State) -> ScreenOutcome<Action>
    /// What to do when the store's state is first shown (SwiftUI's `onAppear`). Default: nothing.
    mutating func appeared(state: State) -> ScreenOutcome<Action>
    /// The store's state, once every dispatch of this view has reached it (or was refused). Default:
    /// nothing.
    mutating func settled(state: State)
}

extension TypedScreen {
    public mutating func appeared(state: State) -> ScreenOutcome<Action> { .ignored }
    public mutating func settled(state: State) {}

    // StoreScreen's requirements, over the state as JSON: the wire's decoder reads JSON too.

    public func render(state: Data, previous: Data?, width: Int) -> Frame {
        render(wire: Array(state), previous: previous.map(Array.init), width: width)
    }

    public mutating func handle(_ key: Key, state: Data) -> KeyOutcome {
        guard let typed = Self.state(wire: Array(state)) else { return .ignored }
        return Self.keyOutcome(handle(key, state: typed))
    }

    public mutating func appeared(state: Data) -> KeyOutcome { appeared(wire: Array(state)) }

    public mutating func settled(state: Data) { settled(wire: Array(state)) }

    // What the view calls: the state in the wire's own format, decoded by the app's codec.

    /// The body for what a view shows: from the typed states the view's replica handed over (nothing
    /// decoded), or from the bytes when it has none (an app this binary runs another version of).
    func render(shown: InteractiveView.Shown, width: Int) -> Frame? {
        guard let update = shown.update else { return nil }
        if let state = update.typedState?.value as? State {
            return render(state: state, previous: shown.previousTyped?.value as? State, width: width)
        }
        return render(wire: update.state, previous: shown.previous, width: width)
    }

    /// Reacts to a key on the state shown: its typed value when the view has one.
    mutating func handle(_ key: Key, shown update: ViewUpdate?) -> KeyOutcome {
        guard let state = update?.typedState?.value as? State else { return handle(key, wire: update?.state ?? []) }
        return Self.keyOutcome(handle(key, state: state))
    }

    mutating func appeared(shown update: ViewUpdate) -> KeyOutcome {
        guard let state = update.typedState?.value as? State else { return appeared(wire: update.state) }
        return Self.keyOutcome(appeared(state: state))
    }

    mutating func settled(shown update: ViewUpdate) {
        guard let state = update.typedState?.value as? State else { return settled(wire: update.state) }
        settled(state: state)
    }

    func render(wire: [UInt8], previous: [UInt8]?, width: Int) -> Frame {
        guard let typed = Self.state(wire: wire) else { return [StyledLine("(not a \(Self.app) state)", .bad)] }
        return render(state: typed, previous: previous.flatMap(Self.state(wire:)), width: width)
    }

    mutating func handle(_ key: Key, wire: [UInt8]) -> KeyOutcome {
        // A screen's keys need its state: say why a key does nothing rather than drop it silently.
        guard let typed = Self.state(wire: wire) else { return .failed(Self.unreadable(wire)) }
        return Self.keyOutcome(handle(key, state: typed))
    }

    mutating func appeared(wire: [UInt8]) -> KeyOutcome {
        guard let typed = Self.state(wire: wire) else { return .ignored }
        return Self.keyOutcome(appeared(state: typed))
    }

    mutating func settled(wire: [UInt8]) {
        if let typed = Self.state(wire: wire) { settled(state: typed) }
    }

    /// The state in either codec: binary, or JSON.
    static func state(wire: [UInt8]) -> State? { try? WireCodec().decode(State.self, from: wire) }

    /// Why a key cannot act on `wire`: no state yet, or one this screen's `State` cannot read (a store
    /// running another version of the app).
    static func unreadable(_ wire: [UInt8]) -> String {
        wire.isEmpty ? "no \(app) state yet" : "this screen cannot read the store's \(app) state (another version of the app?)"
    }

    /// A typed outcome as the view carries it out: an action is sent in the binary codec, under its
    /// case name.
    static func keyOutcome(_ outcome: ScreenOutcome<Action>) -> KeyOutcome {
        switch outcome {
        case .ignored: return .ignored
        case .redraw: return .redraw
        case .send(let action):
            do {
                return .send(app: app, type: ActionCoding.caseName(of: action), payload: try WireCodec().encode(action))
            } catch {
                return .failed("cannot encode \(ActionCoding.caseName(of: action)): \(error)")
            }
        }
    }
}

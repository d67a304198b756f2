/// A store screen that belongs to one app: `zflux view` shows it for every store running that app.
///
/// Register screens by value when the binary starts (`ZFluxCLI.main(apps:screens:)`), never by editing
/// a list inside zflux:
///
/// ```swift
/// struct PollScreen: AppScreen {
///     static let app = "poll"
///     init() {}
///     func render(state: Data, previous: Data?, width: Int) -> Frame { … }
///     mutating func handle(_ key: Key, state: Data) -> KeyOutcome { … }
///     var help: String { "↑↓ choose · Enter vote" }
/// }
/// ```
public protocol AppScreen: StoreScreen {
    /// The name of the app whose stores this screen shows.
    static var app: String { get }
    /// A screen with nothing typed or selected yet.
    init()
}

/// The screens one binary has, by app; a store whose app has none gets the generic state tree.
public struct ScreenRegistry: Sendable {
    private var makers: [String: @Sendable () -> any StoreScreen] = [:]

    /// Registers each screen for its ``AppScreen/app``; a later one replaces an earlier one for the same app.
    public init(_ screens: [any AppScreen.Type] = []) {
        for screen in screens { register(screen) }
    }

    /// Registers `screen` for its app.
    public mutating func register(_ screen: any AppScreen.Type) {
        let type = ScreenType(type: screen)
        makers[screen.app] = { type.type.init() }
    }

    /// Registers a screen made by `make` for `app` (a screen that needs arguments, or serves several apps).
    public mutating func register(app: String, _ make: @escaping @Sendable () -> any StoreScreen) {
        makers[app] = make
    }

    /// The apps that have a screen of their own.
    public var apps: [String] { makers.keys.sorted() }

    /// A fresh screen for a store running `app`: its registered screen, or the state tree.
    public func screen(forApp app: String) -> any StoreScreen {
        makers[app]?() ?? StateTreeScreen()
    }
}

/// A screen's type, held by a `@Sendable` maker.
// @unchecked: a metatype is an immutable value; nothing is shared but the type's identity.
private struct ScreenType: @unchecked Sendable {
    let type: any AppScreen.Type
}

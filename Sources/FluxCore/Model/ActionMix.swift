/// A weighted mix of actions whose arguments are drawn from a seeded generator: what the simulator
/// dispatches against a binary's apps. The same seed draws the same actions.
public struct ActionMix: Sendable {
    /// One kind of action in the mix.
    public struct Entry: Sendable {
        public var app: String
        public var type: String
        /// Relative weight (≥ 1): an entry of weight 2 is drawn twice as often as one of weight 1.
        public var weight: Int
        /// The arguments (a JSON object), drawn from the generator; empty means `{}`.
        public var arguments: @Sendable (inout SplitMix64) -> String

        public init(_ app: String, _ type: String, weight: Int = 1, arguments: @escaping @Sendable (inout SplitMix64) -> String = { _ in "" }) {
            precondition(weight >= 1, "an entry's weight is at least 1")
            self.app = app
            self.type = type
            self.weight = weight
            self.arguments = arguments
        }
    }

    public var entries: [Entry]

    public init(_ entries: [Entry]) { self.entries = entries }

    /// Every action that people (not effects) send, of each app, with its example arguments, weight 1:
    /// a mix for apps that come with none of their own.
    public static func examples(of apps: [any AnyApp]) -> ActionMix {
        ActionMix(
            apps.flatMap { app in
                app.describe().actions.filter { $0.origin != .effect }.map { action in
                    let example = action.fields.isEmpty ? "" : action.example
                    return Entry(app.name, action.type) { _ in example }
                }
            })
    }

    /// The apps the mix dispatches to, in the order they first appear.
    public var apps: [String] {
        var seen: Set<String> = []
        return entries.compactMap { seen.insert($0.app).inserted ? $0.app : nil }
    }

    public var totalWeight: Int { entries.reduce(0) { $0 + $1.weight } }

    /// The entry that `draw` (in `0..<totalWeight`) falls on.
    public func entry(at draw: Int) -> Entry? {
        var rest = draw
        for entry in entries {
            if rest < entry.weight { return entry }
            rest -= entry.weight
        }
        return nil
    }
}

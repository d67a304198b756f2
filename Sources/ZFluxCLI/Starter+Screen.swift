/// The app's terminal screen, shown by `NAME view NAME`.
extension Starter {
    var screen: String {
        #"""
        import ViewNode

        /// The tally on a terminal (`\#(appName) view \#(appName)`): ↑↓ choose an option, Enter votes for it,
        /// `l` loads the ballot. A screen is a pure function of the store's state (and what the screen
        /// itself has selected); a key that changes anything becomes an action, dispatched like any other.
        /// It reads the app's own State and sends its own Action values: no JSON on the way.
        public struct \#(screenType): TypedScreen {
            public static let app = \#(name).name
            /// The option the cursor is on.
            public var selected = 0

            public init() {}

            public func render(state: \#(name).State, previous before: \#(name).State?, width: Int) -> Frame {
                let total = state.totalVotes
                var frame: Frame = [StyledLine("Tally", .bold) + StyledLine("  \(total) vote\(total == 1 ? "" : "s")", .dim)]
                if state.isLoading { frame.append(StyledLine("loading the ballot…", .dim)) }
                if let error = state.loadError { frame.append(StyledLine("! could not load the ballot: \(error)", .bad)) }
                frame.append("")
                if state.options.isEmpty { frame.append(StyledLine("  (no options yet: press l to load the ballot)", .dim)) }
                let nameWidth = state.options.map(\.name.count).max() ?? 0
                let barRoom = max(0, width - nameWidth - 16)
                let most = max(1, state.options.map(\.votes).max() ?? 0)
                for (index, option) in state.options.enumerated() {
                    let name = option.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                    let votes = String(option.votes).padding(toLength: 6, withPad: " ", startingAt: 0)
                    let bar = String(repeating: "█", count: option.votes * barRoom / most)
                    let text = "  \(name)  \(votes)\(bar)"
                    let changed = before.map { old in old.options.first { $0.name == option.name }?.votes != option.votes } ?? false
                    frame.append(index == selected ? StyledLine(text, .inverse) : StyledLine(text, changed ? .highlight : .plain))
                }
                return frame
            }

            public mutating func handle(_ key: Key, state: \#(name).State) -> ScreenOutcome<\#(name).Action> {
                let options = state.options
                switch key {
                case .up:
                    selected = max(0, selected - 1)
                case .down:
                    selected = min(max(0, options.count - 1), selected + 1)
                case .enter, .character(" "):
                    guard options.indices.contains(selected) else { return .ignored }
                    return .send(.voteCast(option: options[selected].name))
                case .character("l"):
                    return .send(.loadTapped)
                default:
                    return .ignored
                }
                return .redraw
            }

            public var help: String { "↑↓ choose · Enter vote · l load the ballot · Ctrl-C quit" }
        }

        """#
    }
}

import Examples
import Foundation
import ViewNode

/// The example apps' screens, registered with the CLI the way any app's screens are
/// (`ZFluxCLI.main(apps:screens:)`); any other store gets the generic state tree. Each is a
/// `TypedScreen`: it renders its app's own `State` and sends its own `Action` values.
public enum ExampleScreens {
    public static var all: [any AppScreen.Type] {
        [
            TodoScreen.self, StarScreen.self, FilterScreen.self, LoginScreen.self, CounterScreen.self, PrimesScreen.self, FoodScreen.self,
        ]
    }

    /// The screen `zflux view` shows for a store of `app`.
    public static func screen(forApp app: String) -> any StoreScreen { ScreenRegistry(all).screen(forApp: app) }
}

/// The ToDo list: type a title and press Enter to add it; Tab moves to the list, where ↑↓ select,
/// Space toggles, `d` removes, `l` loads the saved todos and `c` clears completed ones.
public struct TodoScreen: TypedScreen {
    public static let app = "todo"
    public enum Focus: Equatable, Sendable { case input, list }
    public var input = ""
    public var focus = Focus.input
    public var selected = 0

    public init() {}

    public func render(state: Todo.State, previous: Todo.State?, width: Int) -> Frame {
        var frame: Frame = [StyledLine(state.title, .bold) + (state.isLoading ? StyledLine("  loading…", .dim) : "")]
        if let error = state.loadError { frame.append(StyledLine("! could not load: \(error)", .bad)) }
        frame.append("")
        if state.todos.isEmpty { frame.append(StyledLine("  (nothing to do)", .dim)) }
        for (index, item) in state.todos.enumerated() {
            let line = StyledLine("  [\(item.done ? "x" : " ")] ") + StyledLine(item.title, item.done ? .dim : .plain)
            frame.append(focus == .list && index == selected ? StyledLine(line.plainText, .inverse) : line)
        }
        frame.append("")
        let enabled = input.count >= Todo.minimumTitleLength
        let cursor = focus == .input ? "▏" : ""
        frame.append(
            StyledLine("New todo: ", .accent) + StyledLine(input + cursor)
                + StyledLine("   ")
                + (enabled ? StyledLine("[Add] enabled", .good) : StyledLine("[Add] disabled (\(Todo.minimumTitleLength)+ characters)", .dim)))
        return frame
    }

    public mutating func handle(_ key: Key, state: Todo.State) -> ScreenOutcome<Todo.Action> {
        let count = state.todos.count
        switch (focus, key) {
        case (_, .tab):
            focus = focus == .input ? .list : .input
        case (.input, .enter):
            // Sent even when Add shows disabled: the dispatcher's answer is shown either way.
            defer { input = "" }
            return .send(.addTodo(title: input))
        case (.input, .backspace):
            if !input.isEmpty { input.removeLast() }
        case (.input, .character(let c)):
            input.append(c)
        case (.input, .down):
            focus = .list
        case (.list, .up):
            selected = max(0, selected - 1)
        case (.list, .down):
            selected = min(max(0, count - 1), selected + 1)
        case (.list, .character(" ")), (.list, .enter):
            return count > 0 ? .send(.toggleTodo(index: selected)) : .ignored
        case (.list, .character("d")), (.list, .delete), (.list, .backspace):
            guard count > 0 else { return .ignored }
            defer { selected = max(0, min(selected, count - 2)) }
            return .send(.removeTodo(index: selected))
        case (.list, .character("l")):
            return .send(.loadTapped)
        case (.list, .character("c")):
            return .send(.clearCompleted)
        default:
            return .ignored
        }
        return .redraw
    }

    public var takesText: Bool { focus == .input }

    public var help: String {
        focus == .input
            ? "type a title · Enter add · Tab/↓ to the list · Ctrl-C quit"
            : "↑↓ select · Space toggle · d remove · l load · c clear done · Tab to input · Ctrl-C quit"
    }
}

/// The star button: `s` stars or unstars.
public struct StarScreen: TypedScreen {
    public static let app = "star"
    public init() {}

    public func render(state: Star.State, previous: Star.State?, width: Int) -> Frame {
        let style: StyledLine.Style =
            switch state.status {
            case .starred: .highlight
            case .staring, .unstaring: .dim
            case .unstarred: .plain
            }
        var frame: Frame = [StyledLine(Star.render(state), style)]
        if state.status == .staring || state.status == .unstaring { frame.append(StyledLine("request under way…", .dim)) }
        return frame
    }

    public mutating func handle(_ key: Key, state: Star.State) -> ScreenOutcome<Star.Action> {
        key == .character("s") ? .send(.starTapped) : .ignored
    }

    public var help: String { "s star/unstar · Ctrl-C quit" }
}

/// The annotation filters: ↑↓ select a filter, Space toggles it, `g` opens or leaves its group,
/// `r` resets the selected filter's group, `R` resets everything.
public struct FilterScreen: TypedScreen {
    public static let app = "filter"
    public var selected = 0
    let filters = AnnotationFilter.Filter.allCases

    public init() {}

    public func render(state: AnnotationFilter.State, previous: AnnotationFilter.State?, width: Int) -> Frame {
        var frame: Frame = [
            StyledLine("Filters", .bold) + (state.isFiltering ? StyledLine("  filtering", .highlight) : StyledLine("  showing everything", .dim))
                + StyledLine(state.openGroup.map { "  › in group \($0.rawValue)" } ?? "")
        ]
        for group in AnnotationFilter.Group.allCases {
            frame.append(StyledLine("  \(group.rawValue)", .accent))
            for filter in group.filters {
                let index = filters.firstIndex(of: filter)
                let text = "    [\(state.isActive(filter) ? "x" : " ")] \(filter.rawValue)"
                frame.append(index == selected ? StyledLine(text, .inverse) : StyledLine(text, state.isActive(filter) ? .good : .plain))
            }
        }
        return frame
    }

    public mutating func handle(_ key: Key, state: AnnotationFilter.State) -> ScreenOutcome<AnnotationFilter.Action> {
        let filter = filters[selected]
        switch key {
        case .up: selected = max(0, selected - 1)
        case .down: selected = min(filters.count - 1, selected + 1)
        case .character(" "), .enter:
            return .send(.filterToggled(filter: filter))
        case .character("g"):
            return state.openGroup == filter.group ? .send(.groupLeft) : .send(.groupEntered(group: filter.group))
        case .character("r"):
            return .send(.resetGroupTapped(group: filter.group))
        case .character("R"):
            return .send(.resetAllTapped)
        default:
            return .ignored
        }
        return .redraw
    }

    public var help: String { "↑↓ select · Space toggle · g open/leave group · r reset group · R reset all · Ctrl-C quit" }
}

/// The login form: type into the focused field (Tab switches), Enter logs in, Ctrl-O logs out. Every
/// edit is an action, so every view of the store sees the form as it is typed; each field keeps an
/// edit buffer, so a paste (many keys at once) arrives whole.
public struct LoginScreen: TypedScreen {
    public static let app = "login"
    public enum Field: Equatable, Sendable { case username, password }
    public var focus = Field.username
    public var username = EditBuffer()
    public var password = EditBuffer()

    public init() {}

    public func render(state: Login.State, previous: Login.State?, width: Int) -> Frame {
        var state = state
        if let user = state.loggedInAs { return [StyledLine("Signed in as \(user)", .good), "", StyledLine("Ctrl-O to log out", .dim)] }
        // The fields as being typed; their marks judge that text.
        state.username = username.text(store: state.username)
        state.password = password.text(store: state.password)
        func mark(_ ok: Bool) -> StyledLine { ok ? StyledLine(" ✓", .good) : StyledLine(" ✗", .bad) }
        let cursor = "▏"
        let username =
            StyledLine("Username: ", focus == .username ? .accent : .plain) + StyledLine(state.username + (focus == .username ? cursor : ""))
            + mark(state.isUsernameValid)
        let password =
            StyledLine("Password: ", focus == .password ? .accent : .plain)
            + StyledLine(String(repeating: "•", count: state.password.count) + (focus == .password ? cursor : "")) + mark(state.isPasswordValid)
        let button: StyledLine =
            state.isLoggingIn
            ? StyledLine("[Log in] signing in…", .dim)
            : state.isLoginEnabled ? StyledLine("[Log in] enabled", .good) : StyledLine("[Log in] disabled", .dim)
        var frame: Frame = [username, password, "", button]
        if let error = state.error { frame.append(StyledLine("! \(error)", .bad)) }
        return frame
    }

    public mutating func handle(_ key: Key, state: Login.State) -> ScreenOutcome<Login.Action> {
        let change: (inout String) -> Void
        switch key {
        case .tab, .up, .down:
            focus = focus == .username ? .password : .username
            return .redraw
        case .enter:
            return .send(.loginTapped)
        case .control("o"):
            return .send(.logoutTapped)
        case .backspace:
            guard !(focus == .username ? username.text(store: state.username) : password.text(store: state.password)).isEmpty else {
                return .ignored
            }
            change = { $0.removeLast() }
        case .character(let c):
            change = { $0.append(c) }
        default:
            return .ignored
        }
        switch focus {
        case .username:
            let text = username.edit(store: state.username, change)
            return .send(.usernameChanged(username: text))
        case .password:
            let text = password.edit(store: state.password, change)
            return .send(.passwordChanged(password: text))
        }
    }

    public mutating func settled(state: Login.State) {
        username.follow()
        password.follow()
    }

    public var takesText: Bool { true }

    public var help: String { "type · Tab switch field · Enter log in · Ctrl-O log out · Ctrl-C quit" }
}

/// The counter: `+` and `-`, `0` resets.
public struct CounterScreen: TypedScreen {
    public static let app = "counter"
    public init() {}

    public func render(state: Counter.State, previous: Counter.State?, width: Int) -> Frame {
        return [StyledLine("count: ") + StyledLine("\(state.count)", .bold)]
    }

    public mutating func handle(_ key: Key, state: Counter.State) -> ScreenOutcome<Counter.Action> {
        switch key {
        case .character("+"), .up: .send(.incrementTapped)
        case .character("-"), .down: .send(.decrementTapped)
        case .character("0"): .send(.resetTapped)
        default: .ignored
        }
    }

    public var help: String { "+/↑ increment · -/↓ decrement · 0 reset · Ctrl-C quit" }
}

/// The Point-Free counter: `+`/`-` count, `n` asks for the nth prime (disabled while a request runs),
/// Esc dismisses the answer, `f` saves or removes the count as a favourite prime, `l` loads the saved
/// favourites (done by itself when the screen first shows a store that has not loaded them).
public struct PrimesScreen: TypedScreen {
    public static let app = "primes"
    public init() {}

    public func render(state: Primes.State, previous: Primes.State?, width: Int) -> Frame {
        var frame: Frame = [StyledLine("count: ") + StyledLine("\(state.count)", .bold)]
        if state.isPrime {
            frame.append(
                state.isFavorite ? StyledLine("prime ★ favourite  (f: remove)", .highlight) : StyledLine("prime  (f: save as favourite)", .good))
        } else {
            frame.append(StyledLine("not prime", .dim))
        }
        frame.append("")
        let ask = "[What is the \(Primes.ordinal(max(state.count, 1))) prime?]"
        frame.append(
            state.isNthPrimeRequestInFlight
                ? StyledLine(ask + " asking…", .dim)
                : state.isNthPrimeButtonEnabled ? StyledLine(ask + " n", .accent) : StyledLine(ask + " (count to 1+)", .dim))
        if let alert = state.alert {
            frame.append("")
            frame.append(StyledLine("┃ \(alert)   (Esc: dismiss)", .inverse))
        }
        frame.append("")
        frame.append(StyledLine("Favourite primes", .bold) + StyledLine(state.favoritesLoaded ? "" : "  (not loaded: l)", .dim))
        if state.favorites.isEmpty { frame.append(StyledLine("  none yet", .dim)) }
        for favorite in state.favorites { frame.append(StyledLine("  \(favorite.prime)")) }
        return frame
    }

    public mutating func handle(_ key: Key, state: Primes.State) -> ScreenOutcome<Primes.Action> {
        switch key {
        case .character("+"), .up: .send(.incrementTapped)
        case .character("-"), .down: .send(.decrementTapped)
        // The button is disabled while a request runs: the key does nothing then.
        case .character("n"): state.isNthPrimeButtonEnabled ? .send(.nthPrimeTapped) : .ignored
        case .escape, .character("x"): state.alert != nil ? .send(.alertDismissed) : .ignored
        case .character("f"): .send(.favoriteToggled)
        case .character("l"): .send(.loadFavoritesTapped)
        default: .ignored
        }
    }

    public mutating func appeared(state: Primes.State) -> ScreenOutcome<Primes.Action> {
        state.favoritesLoaded ? .ignored : .send(.loadFavoritesTapped)
    }

    public var help: String { "+/- count · n nth prime · Esc dismiss · f favourite · l load favourites · Ctrl-C quit" }
}

/// The food list after login: `r` fetches it again. Sign in on the login store's screen (Ctrl-N).
public struct FoodScreen: TypedScreen {
    public static let app = "food"
    public init() {}

    public func render(state: Food.State, previous: Food.State?, width: Int) -> Frame {
        guard let user = state.user else { return [StyledLine("Nobody is signed in: log in on the login store's screen.", .dim)] }
        var frame: Frame = [
            StyledLine("Food of \(user)", .bold)
                + (state.isLoading ? StyledLine("  loading…", .dim) : StyledLine("  \(state.totalCalories) kcal", .accent))
        ]
        if let error = state.error { frame.append(StyledLine("! \(error)", .bad)) }
        frame.append("")
        if state.rows.isEmpty && !state.isLoading { frame.append(StyledLine("  (nothing)", .dim)) }
        for row in state.rows {
            frame.append(StyledLine("  \(row.eaten)  ", .dim) + StyledLine(row.item.name) + StyledLine("  \(row.item.calories) kcal", .dim))
        }
        return frame
    }

    public mutating func handle(_ key: Key, state: Food.State) -> ScreenOutcome<Food.Action> {
        key == .character("r") ? .send(.refreshTapped) : .ignored
    }

    public var help: String { "r refresh · Ctrl-C quit" }
}

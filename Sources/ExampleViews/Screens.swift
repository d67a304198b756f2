import Examples
import Foundation
import ViewNode

/// Decodes a store's JSON state into an app's state type.
func decode<S: Decodable>(_ type: S.Type, _ data: Data) -> S? { try? JSONDecoder().decode(type, from: data) }

/// JSON for a string argument.
func quoted(_ text: String) -> String {
    String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
}

/// The example apps' screens, registered with the CLI the way any app's screens are
/// (`ZFluxCLI.main(apps:screens:)`); any other store gets the generic state tree.
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
public struct TodoScreen: AppScreen {
    public static let app = "todo"
    public enum Focus: Equatable, Sendable { case input, list }
    public var input = ""
    public var focus = Focus.input
    public var selected = 0

    public init() {}

    public func render(state data: Data, previous: Data?, width: Int) -> Frame {
        guard let state = decode(Todo.State.self, data) else { return [StyledLine("(not a todo state)", .bad)] }
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

    public mutating func handle(_ key: Key, state data: Data) -> KeyOutcome {
        let count = decode(Todo.State.self, data)?.todos.count ?? 0
        switch (focus, key) {
        case (_, .tab):
            focus = focus == .input ? .list : .input
        case (.input, .enter):
            // Sent even when Add shows disabled: the dispatcher's answer is shown either way.
            defer { input = "" }
            return .dispatch(app: "todo", type: "addTodo", arguments: "{\"title\":\(quoted(input))}")
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
            return count > 0 ? .dispatch(app: "todo", type: "toggleTodo", arguments: "{\"index\":\(selected)}") : .ignored
        case (.list, .character("d")), (.list, .delete), (.list, .backspace):
            guard count > 0 else { return .ignored }
            defer { selected = max(0, min(selected, count - 2)) }
            return .dispatch(app: "todo", type: "removeTodo", arguments: "{\"index\":\(selected)}")
        case (.list, .character("l")):
            return .dispatch(app: "todo", type: "loadTapped", arguments: "{}")
        case (.list, .character("c")):
            return .dispatch(app: "todo", type: "clearCompleted", arguments: "{}")
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
public struct StarScreen: AppScreen {
    public static let app = "star"
    public init() {}

    public func render(state data: Data, previous: Data?, width: Int) -> Frame {
        guard let state = decode(Star.State.self, data) else { return [StyledLine("(not a star state)", .bad)] }
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

    public mutating func handle(_ key: Key, state: Data) -> KeyOutcome {
        key == .character("s") ? .dispatch(app: "star", type: "starTapped", arguments: "{}") : .ignored
    }

    public var help: String { "s star/unstar · Ctrl-C quit" }
}

/// The annotation filters: ↑↓ select a filter, Space toggles it, `g` opens or leaves its group,
/// `r` resets the selected filter's group, `R` resets everything.
public struct FilterScreen: AppScreen {
    public static let app = "filter"
    public var selected = 0
    let filters = AnnotationFilter.Filter.allCases

    public init() {}

    public func render(state data: Data, previous: Data?, width: Int) -> Frame {
        guard let state = decode(AnnotationFilter.State.self, data) else { return [StyledLine("(not a filter state)", .bad)] }
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

    public mutating func handle(_ key: Key, state data: Data) -> KeyOutcome {
        let filter = filters[selected]
        switch key {
        case .up: selected = max(0, selected - 1)
        case .down: selected = min(filters.count - 1, selected + 1)
        case .character(" "), .enter:
            return .dispatch(app: "filter", type: "filterToggled", arguments: "{\"filter\":\"\(filter.rawValue)\"}")
        case .character("g"):
            let open = decode(AnnotationFilter.State.self, data)?.openGroup
            return open == filter.group
                ? .dispatch(app: "filter", type: "groupLeft", arguments: "{}")
                : .dispatch(app: "filter", type: "groupEntered", arguments: "{\"group\":\"\(filter.group.rawValue)\"}")
        case .character("r"):
            return .dispatch(app: "filter", type: "resetGroupTapped", arguments: "{\"group\":\"\(filter.group.rawValue)\"}")
        case .character("R"):
            return .dispatch(app: "filter", type: "resetAllTapped", arguments: "{}")
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
public struct LoginScreen: AppScreen {
    public static let app = "login"
    public enum Field: Equatable, Sendable { case username, password }
    public var focus = Field.username
    public var username = EditBuffer()
    public var password = EditBuffer()

    public init() {}

    public func render(state data: Data, previous: Data?, width: Int) -> Frame {
        guard var state = decode(Login.State.self, data) else { return [StyledLine("(not a login state)", .bad)] }
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

    public mutating func handle(_ key: Key, state data: Data) -> KeyOutcome {
        guard let state = decode(Login.State.self, data) else { return .ignored }
        let change: (inout String) -> Void
        switch key {
        case .tab, .up, .down:
            focus = focus == .username ? .password : .username
            return .redraw
        case .enter:
            return .dispatch(app: "login", type: "loginTapped", arguments: "{}")
        case .control("o"):
            return .dispatch(app: "login", type: "logoutTapped", arguments: "{}")
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
            return .dispatch(app: "login", type: "usernameChanged", arguments: "{\"username\":\(quoted(text))}")
        case .password:
            let text = password.edit(store: state.password, change)
            return .dispatch(app: "login", type: "passwordChanged", arguments: "{\"password\":\(quoted(text))}")
        }
    }

    public mutating func settled(state: Data) {
        username.follow()
        password.follow()
    }

    public var takesText: Bool { true }

    public var help: String { "type · Tab switch field · Enter log in · Ctrl-O log out · Ctrl-C quit" }
}

/// The counter: `+` and `-`, `0` resets.
public struct CounterScreen: AppScreen {
    public static let app = "counter"
    public init() {}

    public func render(state data: Data, previous: Data?, width: Int) -> Frame {
        guard let state = decode(Counter.State.self, data) else { return [StyledLine("(not a counter state)", .bad)] }
        return [StyledLine("count: ") + StyledLine("\(state.count)", .bold)]
    }

    public mutating func handle(_ key: Key, state: Data) -> KeyOutcome {
        switch key {
        case .character("+"), .up: .dispatch(app: "counter", type: "incrementTapped", arguments: "{}")
        case .character("-"), .down: .dispatch(app: "counter", type: "decrementTapped", arguments: "{}")
        case .character("0"): .dispatch(app: "counter", type: "resetTapped", arguments: "{}")
        default: .ignored
        }
    }

    public var help: String { "+/↑ increment · -/↓ decrement · 0 reset · Ctrl-C quit" }
}

/// The Point-Free counter: `+`/`-` count, `n` asks for the nth prime (disabled while a request runs),
/// Esc dismisses the answer, `f` saves or removes the count as a favourite prime, `l` loads the saved
/// favourites (done by itself when the screen first shows a store that has not loaded them).
public struct PrimesScreen: AppScreen {
    public static let app = "primes"
    public init() {}

    public func render(state data: Data, previous: Data?, width: Int) -> Frame {
        guard let state = decode(Primes.State.self, data) else { return [StyledLine("(not a primes state)", .bad)] }
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

    public mutating func handle(_ key: Key, state data: Data) -> KeyOutcome {
        let state = decode(Primes.State.self, data)
        switch key {
        case .character("+"), .up: return .dispatch(app: "primes", type: "incrementTapped", arguments: "{}")
        case .character("-"), .down: return .dispatch(app: "primes", type: "decrementTapped", arguments: "{}")
        case .character("n"):
            // The button is disabled while a request runs: the key does nothing then.
            return state?.isNthPrimeButtonEnabled == true ? .dispatch(app: "primes", type: "nthPrimeTapped", arguments: "{}") : .ignored
        case .escape, .character("x"):
            return state?.alert != nil ? .dispatch(app: "primes", type: "alertDismissed", arguments: "{}") : .ignored
        case .character("f"): return .dispatch(app: "primes", type: "favoriteToggled", arguments: "{}")
        case .character("l"): return .dispatch(app: "primes", type: "loadFavoritesTapped", arguments: "{}")
        default: return .ignored
        }
    }

    public mutating func appeared(state data: Data) -> KeyOutcome {
        decode(Primes.State.self, data)?.favoritesLoaded == false ? .dispatch(app: "primes", type: "loadFavoritesTapped", arguments: "{}") : .ignored
    }

    public var help: String { "+/- count · n nth prime · Esc dismiss · f favourite · l load favourites · Ctrl-C quit" }
}

/// The food list after login: `r` fetches it again. Sign in on the login store's screen (Ctrl-N).
public struct FoodScreen: AppScreen {
    public static let app = "food"
    public init() {}

    public func render(state data: Data, previous: Data?, width: Int) -> Frame {
        guard let state = decode(Food.State.self, data) else { return [StyledLine("(not a food state)", .bad)] }
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

    public mutating func handle(_ key: Key, state: Data) -> KeyOutcome {
        key == .character("r") ? .dispatch(app: "food", type: "refreshTapped", arguments: "{}") : .ignored
    }

    public var help: String { "r refresh · Ctrl-C quit" }
}

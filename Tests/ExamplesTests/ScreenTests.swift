import ExampleViews
import Examples
import FluxCore
import Foundation
import Testing
import ViewNode

/// `value` as JSON; a value that does not encode fails the test that asked (and gives no data).
func json<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) -> Data {
    do {
        return try JSONEncoder().encode(value)
    } catch {
        Issue.record(error, sourceLocation: sourceLocation)
        return Data()
    }
}

@Suite("Example screens are pure functions of state")
struct ScreenTests {
    let todos = Todo.State(todos: [Todo.Item(title: "Buy milk"), Todo.Item(title: "Walk dog", done: true)])

    @Test("todo: title with count, items, and an input line that says whether Add is enabled")
    func todoScreen() {
        var screen = TodoScreen()
        screen.input = "ab"
        #expect(
            screen.render(state: todos, previous: nil, width: 80).map(\.plainText) == [
                "TODO - (2)", "", "  [ ] Buy milk", "  [x] Walk dog", "", "New todo: ab▏   [Add] disabled (3+ characters)",
            ])
        screen.input = "abc"
        #expect(screen.render(state: todos, previous: nil, width: 80).last?.plainText == "New todo: abc▏   [Add] enabled")
        #expect(
            TodoScreen().render(state: Todo.State(isLoading: true), previous: nil, width: 80).map(\.plainText)
                == ["TODO - (0)  loading…", "", "  (nothing to do)", "", "New todo: ▏   [Add] disabled (3+ characters)"])
    }

    @Test("todo keys: typing and Enter adds; Tab to the list, arrows, space toggles, d removes")
    func todoKeys() {
        var screen = TodoScreen()
        let state = todos
        for c in "Tea" { #expect(screen.handle(.character(c), state: state) == .redraw) }
        #expect(screen.handle(.enter, state: state) == .send(.addTodo(title: "Tea")))
        #expect(screen.input.isEmpty)
        #expect(screen.handle(.tab, state: state) == .redraw)
        #expect(screen.handle(.down, state: state) == .redraw)
        #expect(screen.handle(.character(" "), state: state) == .send(.toggleTodo(index: 1)))
        #expect(screen.handle(.character("d"), state: state) == .send(.removeTodo(index: 1)))
        #expect(screen.selected == 0, "the selection stays on a row that exists")
        #expect(screen.handle(.character("l"), state: state) == .send(.loadTapped))
        #expect(screen.render(state: state, previous: nil, width: 80)[2].runs.first?.style == .inverse, "the selected row is shown")
        // A title is a value of the action, whatever characters it holds.
        var typing = TodoScreen()
        for c in #"say "hi""# { _ = typing.handle(.character(c), state: state) }
        #expect(typing.handle(.enter, state: state) == .send(.addTodo(title: #"say "hi""#)))
    }

    @Test("star: the button and count; s stars")
    func starScreen() {
        var screen = StarScreen()
        #expect(
            screen.render(state: Star.State(status: .starred, count: 3), previous: nil, width: 80).map(\.plainText) == ["[★ Starred]  3 stars"])
        #expect(
            screen.render(state: Star.State(status: .staring), previous: nil, width: 80).map(\.plainText)
                == ["[★ Starring…]  0 stars", "request under way…"])
        #expect(screen.handle(.character("s"), state: Star.State()) == .send(.starTapped))
        #expect(screen.handle(.character("x"), state: Star.State()) == .ignored)
    }

    @Test("filter: the groups with their marks; keys toggle, open groups and reset")
    func filterScreen() {
        var screen = FilterScreen()
        let state = AnnotationFilter.State(active: [.issues, .issueOpen], openGroup: .issues)
        #expect(
            screen.render(state: state, previous: nil, width: 80).map(\.plainText) == [
                "Filters  filtering  › in group issues", "  types", "    [x] issues", "    [ ] photos", "    [ ] links", "    [ ] text",
                "  issues", "    [x] issueOpen", "    [ ] issueInReview", "    [ ] issueClosed", "    [ ] assignedToMe",
            ])
        #expect(screen.handle(.character(" "), state: state) == .send(.filterToggled(filter: .issues)))
        for _ in 0..<4 { _ = screen.handle(.down, state: state) }
        #expect(screen.handle(.character("g"), state: state) == .send(.groupLeft))
        #expect(screen.handle(.character("r"), state: state) == .send(.resetGroupTapped(group: .issues)))
        #expect(screen.handle(.character("R"), state: state) == .send(.resetAllTapped))
    }

    @Test("login: fields with validity marks, masked password, button state; every edit is an action")
    func loginScreen() {
        var screen = LoginScreen()
        let state = Login.State(username: "ada@example.com", password: "secret")
        #expect(
            screen.render(state: state, previous: nil, width: 80).map(\.plainText) == [
                "Username: ada@example.com▏ ✓", "Password: •••••• ✓", "", "[Log in] enabled",
            ])
        #expect(
            screen.handle(.character("x"), state: state)
                == .send(.usernameChanged(username: "ada@example.comx")))
        #expect(screen.handle(.tab, state: state) == .redraw)
        #expect(screen.handle(.backspace, state: state) == .send(.passwordChanged(password: "secre")))
        #expect(screen.handle(.enter, state: state) == .send(.loginTapped))
        #expect(LoginScreen().render(state: Login.State(loggedInAs: "Ada"), previous: nil, width: 80).first?.plainText == "Signed in as Ada")
        let invalid = Login.State(username: "ada", password: "1", error: "wrong username or password")
        #expect(
            LoginScreen().render(state: invalid, previous: nil, width: 80).map(\.plainText) == [
                "Username: ada▏ ✗", "Password: • ✗", "", "[Log in] disabled", "! wrong username or password",
            ])
    }

    @Test("login: keys faster than the store build on the field's edit buffer, and the field follows the store once settled")
    func loginPaste() {
        var screen = LoginScreen()
        let stale = Login.State()
        let pasted = String((0..<200).map { index in Array("ada.lovelace+analytical@example.com")[index % 35] })
        var last = ScreenOutcome<Login.Action>.ignored
        // The store has not caught up with any of these keys: every key sees the empty state.
        for character in pasted { last = screen.handle(.character(character), state: stale) }
        #expect(
            last == .send(.usernameChanged(username: pasted)))
        #expect(screen.render(state: stale, previous: nil, width: 300).first?.plainText == "Username: \(pasted)▏ ✗")
        #expect(
            screen.handle(.backspace, state: stale)
                == .send(.usernameChanged(username: String(pasted.dropLast()))))
        // Settled: another view's edit shows, and the next key builds on it.
        let elsewhere = Login.State(username: "grace@example.com")
        screen.settled(state: elsewhere)
        #expect(screen.render(state: elsewhere, previous: nil, width: 80).first?.plainText == "Username: grace@example.com▏ ✓")
        #expect(
            screen.handle(.character("!"), state: elsewhere)
                == .send(.usernameChanged(username: "grace@example.com!")))
        // The password field has its own buffer.
        _ = screen.handle(.tab, state: elsewhere)
        for character in "secret" { last = screen.handle(.character(character), state: elsewhere) }
        #expect(last == .send(.passwordChanged(password: "secret")))
        // Text fields take `?` as text; elsewhere it opens the key help.
        var todo = TodoScreen()
        #expect(screen.takesText && todo.takesText && !CounterScreen().takesText)
        _ = todo.handle(.tab, state: Todo.State())
        #expect(!todo.takesText, "on the list, keys are commands")
    }

    @Test(
        "a typed screen read through StoreScreen: the JSON state renders the same, and a key's action travels in the binary codec under its case name"
    )
    func typedScreenThroughJSON() throws {
        var screen = TodoScreen()
        let typed = screen.render(state: todos, previous: nil, width: 80).map(\.plainText)
        #expect(screen.render(state: json(todos), previous: nil, width: 80).map(\.plainText) == typed)
        #expect(screen.render(state: Data("nope".utf8), previous: nil, width: 80).map(\.plainText) == ["(not a todo state)"])
        for c in "Tea" { _ = screen.handle(.character(c), state: json(todos)) }
        guard case .send(let app, let type, let payload) = screen.handle(.enter, state: json(todos)) else {
            Issue.record("Enter on a typed screen did not send its action")
            return
        }
        #expect(app == "todo" && type == "addTodo")
        #expect(WireCodec.isBinary(payload))
        #expect(try WireCodec().decode(Todo.Action.self, from: payload) == .addTodo(title: "Tea"))
    }

    @Test("each example app has its own screen; other stores get the state tree")
    func catalog() {
        #expect(ExampleScreens.screen(forApp: "todo") is TodoScreen)
        #expect(ExampleScreens.screen(forApp: "login") is LoginScreen)
        #expect(ExampleScreens.screen(forApp: "stats") is StateTreeScreen)
    }
}

@Suite("The primes and food screens")
struct SeedScreenTests {
    @Test("primes: the count and whether it is prime, the ask button disabled while a request runs, the alert, the favourites")
    func primes() {
        var screen = PrimesScreen()
        let asking = Primes.State(count: 3, isNthPrimeRequestInFlight: true)
        #expect(
            screen.render(state: asking, previous: nil, width: 80).map(\.plainText) == [
                "count: 3", "prime  (f: save as favourite)", "", "[What is the 3rd prime?] asking…", "", "Favourite primes  (not loaded: l)",
                "  none yet",
            ])
        #expect(screen.handle(.character("n"), state: asking) == .ignored, "disabled while the request runs")
        let answered = Primes.State(
            count: 3, favorites: [Primes.Favorite(prime: 3, savedAt: Date(timeIntervalSince1970: 0))], alert: "The 3rd prime is 5",
            favoritesLoaded: true)
        #expect(screen.render(state: answered, previous: nil, width: 80).map(\.plainText).contains("┃ The 3rd prime is 5   (Esc: dismiss)"))
        #expect(screen.handle(.character("n"), state: answered) == .send(.nthPrimeTapped))
        #expect(screen.handle(.escape, state: answered) == .send(.alertDismissed))
        #expect(screen.handle(.character("f"), state: answered) == .send(.favoriteToggled))
        #expect(screen.handle(.character("+"), state: answered) == .send(.incrementTapped))
        #expect(screen.appeared(state: asking) == .send(.loadFavoritesTapped), "loads at start")
        #expect(screen.appeared(state: answered) == .ignored, "already loaded")
    }

    @Test("food: sign in first; then the rows with their formatted dates, the total, and an error's reason")
    func food() {
        var screen = FoodScreen()
        #expect(
            screen.render(state: Food.State(), previous: nil, width: 80).map(\.plainText) == [
                "Nobody is signed in: log in on the login store's screen."
            ])
        let item = Food.Item(name: "Apple", calories: 95, eatenAt: Date(timeIntervalSince1970: 0))
        let state = Food.State(user: "ada", rows: [Food.Row(item: item, eaten: "1970-01-01 00:00")], error: "the food service failed: 503")
        #expect(
            screen.render(state: state, previous: nil, width: 80).map(\.plainText) == [
                "Food of ada  95 kcal", "! the food service failed: 503", "", "  1970-01-01 00:00  Apple  95 kcal",
            ])
        #expect(screen.handle(.character("r"), state: state) == .send(.refreshTapped))
        #expect(ExampleScreens.screen(forApp: "primes") is PrimesScreen && ExampleScreens.screen(forApp: "food") is FoodScreen)
    }
}

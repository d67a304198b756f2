import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("Food (the list after login)")
struct FoodTests {
    static let listJSON = Data(
        #"[{"name":"Apple","calories":95,"eatenAt":"2026-03-01T15:00:00Z"},{"name":"Soup","calories":420,"eatenAt":"2026-03-02T19:15:00Z"}]"#.utf8)
    static let apple = Food.Item(name: "Apple", calories: 95, eatenAt: Date(timeIntervalSince1970: 1_772_377_200))
    static let soup = Food.Item(name: "Soup", calories: 420, eatenAt: Date(timeIntervalSince1970: 1_772_478_900))

    func store(
        _ client: Food.Client, signedIn user: String? = "ada@example.com"
    ) -> TestStore<Food.State, Food.Action, WithOtherState<Food.Environment, Login.State>> {
        TestStore(
            initialState: Food.State(user: user), reducer: Food.reducer,
            environment: WithOtherState(environment: .mock(client), other: Login.State(loggedInAs: user)), reject: Food.reject)
    }

    @Test("the service's JSON decodes into models, newest first, dates formatted through the environment")
    func refresh() async {
        let store = store(.mock(.success(Self.listJSON)))
        await store.send(.refreshTapped) { $0.isLoading = true }
        await store.receive(.listLoaded(items: [Self.apple, Self.soup])) {
            $0.isLoading = false
            $0.rows = [Food.Row(item: Self.soup, eaten: "2026-03-02 19:15"), Food.Row(item: Self.apple, eaten: "2026-03-01 15:00")]
        }
        #expect(store.state.totalCalories == 515)
        await store.finish()
    }

    @Test("a formatter of the environment's choosing is what the rows show")
    func formatter() async {
        let store = TestStore(
            initialState: Food.State(user: "ada"), reducer: Food.reducer,
            environment: WithOtherState(
                environment: Food.Environment(client: .mock(.success(Self.listJSON)), formatDate: { _ in "some day" }), other: Login.State()))
        await store.send(.refreshTapped) { $0.isLoading = true }
        await store.receive(.listLoaded(items: [Self.apple, Self.soup])) {
            $0.isLoading = false
            $0.rows = [Food.Row(item: Self.soup, eaten: "some day"), Food.Row(item: Self.apple, eaten: "some day")]
        }
        await store.finish()
    }

    @Test("errors show their reason: the service failing, and a body that is not the list")
    func errors() async {
        let failing = store(.mock(.failure(Food.ClientError("503 Service Unavailable"))))
        await failing.send(.refreshTapped) { $0.isLoading = true }
        await failing.receive(.loadFailed(reason: "the food service failed: 503 Service Unavailable")) {
            $0.isLoading = false
            $0.error = "the food service failed: 503 Service Unavailable"
        }
        await failing.finish()

        let garbled = store(.mock(.success(Data("<html>".utf8))), signedIn: "ada")
        await garbled.send(.refreshTapped) { $0.isLoading = true }
        await garbled.receive(.loadFailed(reason: "the food service sent something that is not a food list (6 bytes)")) {
            $0.isLoading = false
            $0.error = "the food service sent something that is not a food list (6 bytes)"
        }
        await garbled.finish()
    }

    @Test("nobody signed in: refreshing is refused")
    func signedOut() async {
        let store = store(.mock(.success(Self.listJSON)), signedIn: nil)
        await store.send(.refreshTapped, rejectedWith: "nobody is signed in: log in first")
        await store.finish()
    }

    @Test("in a cluster: signing in on the login store fetches the list in the food store; signing out clears it")
    func cluster() async throws {
        let login = Login.app(environment: .standIn(clock: .mock()))
        let cluster = try await TestCluster.start(stores: [
            "login": login, "food": Food.app(environment: .mock(.mock(.success(Self.listJSON))), login: login),
        ])
        try await cluster.dispatch(Login.Action.usernameChanged(username: "ada@example.com"), to: "login")
        try await cluster.dispatch(Login.Action.passwordChanged(password: "analytical"), to: "login")
        try await cluster.dispatch(Login.Action.loginTapped, to: "login")
        let food = try await cluster.state(of: "food", as: Food.State.self) { !$0.rows.isEmpty }
        #expect(food.user == "ada@example.com" && !food.isLoading && food.error == nil)
        #expect(food.rows.map(\.item.name) == ["Soup", "Apple"] && food.rows.first?.eaten == "2026-03-02 19:15")
        try await cluster.dispatch(Login.Action.logoutTapped, to: "login")
        let out = try await cluster.state(of: "food", as: Food.State.self) { $0.user == nil }
        #expect(out == Food.State())
        try await cluster.shutdown()
    }
}

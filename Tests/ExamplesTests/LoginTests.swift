import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Testing

@Suite("Login")
struct LoginTests {
    @Test("login is enabled only with an e-mail and a password of at least 6 characters")
    func validation() async {
        let store = TestStore(Login.app(environment: .mock(.success("Ada"))))
        await store.send(.usernameChanged(username: "ada")) { $0.username = "ada" }
        #expect(!store.state.isUsernameValid && !store.state.isLoginEnabled)
        await store.send(.usernameChanged(username: "ada@example.com")) { $0.username = "ada@example.com" }
        #expect(store.state.isUsernameValid && !store.state.isLoginEnabled)
        await store.send(.passwordChanged(password: "12345")) { $0.password = "12345" }
        #expect(!store.state.isPasswordValid && !store.state.isLoginEnabled)
        await store.send(.passwordChanged(password: "123456")) { $0.password = "123456" }
        #expect(store.state.isLoginEnabled)
        // Tapping while disabled does nothing.
        await store.send(.passwordChanged(password: "1")) { $0.password = "1" }
        await store.send(.loginTapped)
        await store.finish()
    }

    @Test(
        "e-mail check",
        arguments: [
            ("ada@example.com", true), ("a@b.co", true), ("ada", false), ("@example.com", false), ("ada@", false),
            ("ada@example", false), ("ada@example.", false), ("a b@c.d", false), ("a@b@c.d", false),
        ])
    func email(text: String, valid: Bool) {
        #expect(Login.isEmail(text) == valid)
    }

    @Test("a successful login signs in and forgets the password")
    func success() async {
        let store = TestStore(
            initialState: Login.State(username: "ada@example.com", password: "analytical"),
            reducer: Login.reducer, environment: .mock(.success("Ada Lovelace")))
        await store.send(.loginTapped) { $0.isLoggingIn = true }
        #expect(!store.state.isLoginEnabled, "no second login while one is under way")
        await store.receive(.loginSucceeded(user: "Ada Lovelace")) {
            $0.isLoggingIn = false
            $0.loggedInAs = "Ada Lovelace"
            $0.password = ""
        }
        await store.send(.logoutTapped) { $0 = Login.State() }
        await store.finish()
    }

    @Test("a refused login shows the reason and keeps what was typed")
    func failure() async {
        let store = TestStore(
            initialState: Login.State(username: "ada@example.com", password: "wrongpass"),
            reducer: Login.reducer, environment: .mock(.failure(Login.Refused(reason: "wrong username or password"))))
        await store.send(.loginTapped) { $0.isLoggingIn = true }
        await store.receive(.loginFailed(reason: "wrong username or password")) {
            $0.isLoggingIn = false
            $0.error = "wrong username or password"
        }
        await store.send(.passwordChanged(password: "another")) {
            $0.password = "another"
            $0.error = nil
        }
        await store.finish()
    }

    @Test("in a cluster: typed fields and the login answer are sequenced in order")
    func cluster() async throws {
        let cluster = try await TestCluster.start(stores: ["login": Login.app(environment: .mock(.success("Ada")))])
        try await cluster.dispatch(Login.Action.usernameChanged(username: "ada@example.com"), to: "login")
        try await cluster.dispatch(Login.Action.passwordChanged(password: "analytical"), to: "login")
        try await cluster.dispatch(Login.Action.loginTapped, to: "login")
        let state = try await cluster.state(of: "login", as: Login.State.self, atLeast: 4)
        #expect(state == Login.State(username: "ada@example.com", password: "", loggedInAs: "Ada"))
        try await cluster.shutdown()
    }

    @Test("the renderer masks the password")
    func render() {
        #expect(
            Login.render(Login.State(username: "ada@example.com", password: "secret1"))
                == "username: ada@example.com ✓\npassword: ••••••• ✓\n[Log in] enabled")
    }
}

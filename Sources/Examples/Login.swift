import FluxCore

/// MVVM login validation: the username must be an e-mail address, the password at least 6 characters,
/// and login is enabled only when both hold. Logging in goes through a mockable client.
public enum Login {
    // @WireCodable: written out in Login+WireCodable.swift
    public struct State: Codable, Equatable, Sendable {
        public var username = ""
        public var password = ""
        public var isLoggingIn = false
        public var loggedInAs: String? = nil
        public var error: String? = nil
        public init(
            username: String = "", password: String = "", isLoggingIn: Bool = false,
            loggedInAs: String? = nil, error: String? = nil
        ) {
            self.username = username
            self.password = password
            self.isLoggingIn = isLoggingIn
            self.loggedInAs = loggedInAs
            self.error = error
        }

        public var isUsernameValid: Bool { Login.isEmail(username) }
        public var isPasswordValid: Bool { password.count >= Login.minimumPasswordLength }
        public var isLoginEnabled: Bool { isUsernameValid && isPasswordValid && !isLoggingIn }
    }

    // @WireCodable: written out in Login+WireCodable.swift
    public enum Action: Codable, Equatable, Sendable {
        case usernameChanged(username: String)
        case passwordChanged(password: String)
        case loginTapped
        case loginSucceeded(user: String)
        case loginFailed(reason: String)
        case logoutTapped
        /// The session that `loginSucceeded` started ran out: scheduled at sign-in, durably, so it comes
        /// even if the cluster was stopped and started in between (late, then: its stamp says by how much).
        case sessionExpired
    }

    public struct Environment: Sendable {
        /// Checks credentials with the server; returns the signed-in user's display name.
        public var login: @Sendable (_ username: String, _ password: String) async throws -> String
        /// How long a sign-in lasts before `sessionExpired` signs the user out.
        public var sessionLength: Duration

        public init(sessionLength: Duration = Login.sessionLength, login: @escaping @Sendable (String, String) async throws -> String) {
            self.login = login
            self.sessionLength = sessionLength
        }

        /// A stand-in for the login service: a second's delay; the password "wrongpass" is refused.
        public static let live = standIn(clock: .live)

        /// The stand-in's rules on `clock` (`.mock()`: answers at once, for `--mock` clusters).
        public static func standIn(clock: EffectClock) -> Environment {
            Environment { username, password in
                try await clock.sleep(.seconds(1))
                guard password != "wrongpass" else { throw Refused(reason: "wrong username or password") }
                return username
            }
        }

        public static func mock(_ result: Result<String, Refused>) -> Environment {
            Environment { _, _ in try result.get() }
        }
    }

    public struct Refused: Error, Equatable, Sendable {
        public let reason: String
        public init(reason: String) { self.reason = reason }
    }

    public static let minimumPasswordLength = 6
    /// A session's length unless the environment says otherwise: a minute, short enough to watch one end.
    public static let sessionLength: Duration = .seconds(60)
    /// The id the session's end is scheduled under: a new sign-in replaces it, a sign-out cancels it.
    public static let sessionScheduleID = "session"

    /// Something, an @, something, a dot, something: the check MVVM login forms use, not RFC 5322.
    public static func isEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !text.contains(" ") else { return false }
        let domain = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return domain.count >= 2 && domain.allSatisfy { !$0.isEmpty }
    }

    public static let reducer = Reducer<State, Action, Environment> { state, action, environment in
        switch action {
        case .usernameChanged(let username):
            state.username = username
            state.error = nil
            return .none
        case .passwordChanged(let password):
            state.password = password
            state.error = nil
            return .none
        case .loginTapped:
            guard state.isLoginEnabled else { return .none }
            state.isLoggingIn = true
            state.error = nil
            let (username, password) = (state.username, state.password)
            return .run { send in
                do {
                    send(.loginSucceeded(user: try await environment.login(username, password)))
                } catch let refused as Refused {
                    send(.loginFailed(reason: refused.reason))
                } catch {
                    send(.loginFailed(reason: "the login service is unreachable"))
                }
            }
        case .loginSucceeded(let user):
            state.isLoggingIn = false
            state.loggedInAs = user
            state.password = ""
            return .schedule(.sessionExpired, after: environment.sessionLength, id: sessionScheduleID)
        case .loginFailed(let reason):
            state.isLoggingIn = false
            state.error = reason
            return .none
        case .logoutTapped:
            state = State()
            return .cancelSchedule(id: sessionScheduleID)
        case .sessionExpired:
            guard state.loggedInAs != nil else { return .none }
            state = State(username: state.username, error: "your session expired: sign in again")
            return .none
        }
    }

    public static func render(_ state: State) -> String {
        if let user = state.loggedInAs { return "Signed in as \(user)" }
        let check = { (ok: Bool) in ok ? "✓" : "✗" }
        return [
            "username: \(state.username) \(check(state.isUsernameValid))",
            "password: \(String(repeating: "•", count: state.password.count)) \(check(state.isPasswordValid))",
            "[Log in]" + (state.isLoggingIn ? " signing in…" : state.isLoginEnabled ? " enabled" : " disabled")
                + (state.error.map { "  ! \($0)" } ?? ""),
        ].joined(separator: "\n")
    }

    public static func app(environment: Environment = .live) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "login", summary: "MVVM login validation, signing in through a mockable service", initialState: State(),
            reducer: reducer, environment: environment, render: render,
            actions: [
                .user(.usernameChanged(username: "ada@example.com"), "the username field's text (an e-mail address)"),
                .user(.passwordChanged(password: "secret1"), "the password field's text (6+ characters)"),
                .user(.loginTapped, "sign in (only when both fields are valid)"),
                .effect(.loginSucceeded(user: "ada@example.com"), "the service signed the user in"),
                .effect(.loginFailed(reason: "wrong username or password"), "the service refused"),
                .user(.logoutTapped, "sign out and clear the form"),
                .effect(.sessionExpired, "the session ran out (scheduled at sign-in, a minute later)"),
            ])
    }
}

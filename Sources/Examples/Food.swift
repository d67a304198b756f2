import FluxCore
import Foundation

/// The list after login, from the ReactiveCocoa MVVM seed: once the login store says a user signed in,
/// this store fetches the user's food list through a mockable client, decodes its JSON into models, and
/// keeps rows whose dates are formatted through the Environment; a failed fetch shows its reason.
///
/// It reads the login store (`waitFor`): its replica of the login state sees `loginSucceeded` in the same
/// order as the login store, and reacts with the fetch. Logging out clears the list.
public enum Food {
    /// One food as the service sends it.
    // @WireCodable: written out in Food+WireCodable.swift
    public struct Item: Codable, Equatable, Sendable {
        public var name: String
        public var calories: Int
        public var eatenAt: Date
        public init(name: String, calories: Int, eatenAt: Date) {
            self.name = name
            self.calories = calories
            self.eatenAt = eatenAt
        }
    }

    /// One line of the list as shown: the item with its date formatted.
    // @WireCodable: written out in Food+WireCodable.swift
    public struct Row: Codable, Equatable, Sendable {
        public var item: Item
        public var eaten: String
        public init(item: Item, eaten: String) {
            self.item = item
            self.eaten = eaten
        }
    }

    // @WireCodable: written out in Food+WireCodable.swift
    public struct State: Codable, Equatable, Sendable {
        /// Whose list this is (nil: nobody signed in).
        public var user: String? = nil
        public var rows: [Row] = []
        public var isLoading = false
        public var error: String? = nil
        public init(user: String? = nil, rows: [Row] = [], isLoading: Bool = false, error: String? = nil) {
            self.user = user
            self.rows = rows
            self.isLoading = isLoading
            self.error = error
        }
        public var totalCalories: Int { rows.reduce(0) { $0 + $1.item.calories } }
    }

    // @WireCodable: written out in Food+WireCodable.swift
    public enum Action: Codable, Equatable, Sendable {
        case refreshTapped
        case listLoaded(items: [Item])
        case loadFailed(reason: String)
    }

    /// The food service: the JSON list of a user's foods.
    public struct Client: Sendable {
        public var fetch: @Sendable (_ user: String) async throws -> Data
        public init(fetch: @escaping @Sendable (String) async throws -> Data) { self.fetch = fetch }

        /// A stand-in for the service: a delay on `clock`, then a fixed list dated from `clock.now`.
        public static func standIn(clock: EffectClock) -> Client {
            Client { _ in
                try await clock.sleep(.milliseconds(700))
                let now = clock.now().timeIntervalSince1970
                let day = 86_400.0
                let items = [
                    Item(name: "Porridge", calories: 310, eatenAt: Date(timeIntervalSince1970: (now / day).rounded(.down) * day + 7.5 * 3600)),
                    Item(name: "Apple", calories: 95, eatenAt: Date(timeIntervalSince1970: (now / day).rounded(.down) * day - day + 15 * 3600)),
                    Item(
                        name: "Lentil soup", calories: 420,
                        eatenAt: Date(timeIntervalSince1970: (now / day).rounded(.down) * day - day + 19.25 * 3600)),
                ]
                return try Food.encoder.encode(items)
            }
        }

        /// Answers at once with `data` (the service's bytes), or fails with `error`.
        public static func mock(_ result: Result<Data, ClientError>) -> Client { Client { _ in try result.get() } }
    }

    public struct ClientError: Error, Equatable, Sendable, CustomStringConvertible {
        public let message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    public struct Environment: Sendable {
        public var client: Client
        /// How rows show a date (live: UTC, `yyyy-MM-dd HH:mm`; fixed, so a replay formats the same).
        public var formatDate: @Sendable (Date) -> String

        public init(client: Client, formatDate: @escaping @Sendable (Date) -> String = Food.formatUTC) {
            self.client = client
            self.formatDate = formatDate
        }

        public static let live = Environment(client: .standIn(clock: .live))
        public static func mock(_ client: Client = .standIn(clock: .mock())) -> Environment { Environment(client: client) }
    }

    /// Dates as the service writes them: ISO 8601.
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    @Sendable public static func formatUTC(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    enum CancelID: Hashable, Sendable { case fetch }

    static func fetch(for user: String, _ environment: Environment) -> Effect<Action> {
        .run { send in
            let data: Data
            do {
                data = try await environment.client.fetch(user)
            } catch is CancellationError {
                return
            } catch {
                send(.loadFailed(reason: "the food service failed: \(error)"))
                return
            }
            guard let items = try? decoder.decode([Item].self, from: data) else {
                send(.loadFailed(reason: "the food service sent something that is not a food list (\(data.count) bytes)"))
                return
            }
            send(.listLoaded(items: items))
        }
        .cancellable(id: CancelID.fetch, cancelInFlight: true)
    }

    public static let reducer = Reducer<State, Action, WithOtherState<Environment, Login.State>> { state, action, reading in
        switch action {
        case .refreshTapped:
            guard let user = state.user else { return .none }
            state.isLoading = true
            state.error = nil
            return fetch(for: user, reading.environment)
        case .listLoaded(let items):
            // Ignored when nobody is signed in any more (a late answer after a logout).
            guard state.user != nil else { return .none }
            state.isLoading = false
            state.rows = items.sorted { $0.eatenAt > $1.eatenAt }.map { Row(item: $0, eaten: reading.environment.formatDate($0.eatenAt)) }
            return .none
        case .loadFailed(let reason):
            guard state.user != nil else { return .none }
            state.isLoading = false
            state.error = reason
            return .none
        }
    }

    /// What the login store's actions do here: a sign-in fetches that user's list, a sign-out clears it.
    @Sendable public static func onLogin(
        _ state: inout State, _ action: Login.Action, _ reading: WithOtherState<Environment, Login.State>, _ stamp: Stamp
    ) -> Effect<Action> {
        switch action {
        case .loginSucceeded(let user):
            state = State(user: user, isLoading: true)
            return fetch(for: user, reading.environment)
        case .logoutTapped, .sessionExpired:
            state = State()
            return .cancel(id: CancelID.fetch)
        default:
            return .none
        }
    }

    public static func reject(_ state: State, _ action: Action) -> String? {
        if case .refreshTapped = action, state.user == nil { return "nobody is signed in: log in first" }
        return nil
    }

    public static func render(_ state: State) -> String {
        guard let user = state.user else { return "Food: sign in to see your list" }
        var lines = ["Food of \(user)" + (state.isLoading ? "  (loading…)" : "  · \(state.totalCalories) kcal")]
        if let error = state.error { lines.append("  ! \(error)") }
        for row in state.rows { lines.append("  \(row.eaten)  \(row.item.name) (\(row.item.calories) kcal)") }
        return lines.joined(separator: "\n")
    }

    public static func app(
        environment: Environment = .live, login: FluxApp<Login.State, Login.Action, Login.Environment> = Login.app()
    ) -> DependentApp<State, Action, Environment, Login.State, Login.Action, Login.Environment> {
        DependentApp(
            name: "food", summary: "the list after login: fetched through a mockable client when the login store signs a user in",
            reading: login, initialState: State(), reducer: reducer, environment: environment, onOtherAction: onLogin,
            reject: reject, render: render,
            actions: [
                .user(.refreshTapped, "fetch the signed-in user's list again"),
                .effect(
                    .listLoaded(items: [Item(name: "Apple", calories: 95, eatenAt: Date(timeIntervalSince1970: 1_767_225_600))]),
                    "the fetched list, decoded from the service's JSON"),
                .effect(.loadFailed(reason: "the food service failed"), "why the list could not be fetched"),
            ])
    }
}

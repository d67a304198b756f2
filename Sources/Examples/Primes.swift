import FluxCore
import Foundation
import Synchronization

/// The Point-Free counter, whole: count up and down, ask "what is the nth prime?" through an effect (the
/// button disabled while the request runs, the answer shown as an alert to dismiss), and keep favourite
/// primes, saved by a fire-and-forget effect through a `FileClient` and loaded again at start.
public enum Primes {
    // @WireCodable: written out in Primes+WireCodable.swift
    public struct Favorite: Codable, Equatable, Sendable {
        public var prime: Int
        /// When it was saved: the action's sequenced time (its ``Stamp``), so a replay saves the same.
        public var savedAt: Date
        public init(prime: Int, savedAt: Date) {
            self.prime = prime
            self.savedAt = savedAt
        }
    }

    // @WireCodable: written out in Primes+WireCodable.swift
    public struct State: Codable, Equatable, Sendable {
        public var count = 0
        public var favorites: [Favorite] = []
        /// The nth-prime request is running: its button is disabled.
        public var isNthPrimeRequestInFlight = false
        /// The answer (or why there is none), shown until dismissed.
        public var alert: String? = nil
        /// The saved favourites were loaded (or found missing) since the store started empty.
        public var favoritesLoaded = false

        public init(
            count: Int = 0, favorites: [Favorite] = [], isNthPrimeRequestInFlight: Bool = false, alert: String? = nil,
            favoritesLoaded: Bool = false
        ) {
            self.count = count
            self.favorites = favorites
            self.isNthPrimeRequestInFlight = isNthPrimeRequestInFlight
            self.alert = alert
            self.favoritesLoaded = favoritesLoaded
        }

        public var isPrime: Bool { Primes.isPrime(count) }
        public var isFavorite: Bool { favorites.contains { $0.prime == count } }
        public var isNthPrimeButtonEnabled: Bool { !isNthPrimeRequestInFlight && count >= 1 }
    }

    // @WireCodable: written out in Primes+WireCodable.swift
    public enum Action: Codable, Equatable, Sendable {
        case incrementTapped
        case decrementTapped
        case nthPrimeTapped
        case nthPrimeResponse(n: Int, prime: Int?)
        case alertDismissed
        /// Saves the current count as a favourite (it must be prime), or removes it when it is one.
        case favoriteToggled
        case favoriteRemoved(prime: Int)
        case loadFavoritesTapped
        case favoritesLoaded(favorites: [Favorite])
    }

    /// Reads and writes small files: the seed's FileClient.
    public struct FileClient: Sendable {
        public var load: @Sendable (_ name: String) async throws -> Data?
        public var save: @Sendable (_ name: String, _ data: Data) async throws -> Void

        public init(
            load: @escaping @Sendable (String) async throws -> Data?, save: @escaping @Sendable (String, Data) async throws -> Void
        ) {
            self.load = load
            self.save = save
        }

        /// Files in `directory` (created when first saved to).
        public static func live(directory: String) -> FileClient {
            FileClient(
                load: { name in
                    let url = URL(fileURLWithPath: directory).appendingPathComponent(name)
                    return FileManager.default.fileExists(atPath: url.path) ? try Data(contentsOf: url) : nil
                },
                save: { name, data in
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    try data.write(to: URL(fileURLWithPath: directory).appendingPathComponent(name), options: .atomic)
                })
        }

        /// Files in memory: what was saved can be read back and inspected (`files.saved`).
        public static func mock(_ files: MockFiles = MockFiles()) -> FileClient {
            FileClient(load: { files[$0] }, save: { files[$0] = $1 })
        }
    }

    /// The in-memory files of ``FileClient/mock(_:)``.
    public final class MockFiles: Sendable {
        private let files: Mutex<[String: Data]>
        private let saves = Mutex(0)
        public init(_ files: [String: Data] = [:]) { self.files = Mutex(files) }
        public subscript(name: String) -> Data? {
            get { files.withLock { $0[name] } }
            set {
                files.withLock { $0[name] = newValue }
                saves.withLock { $0 += 1 }
            }
        }
        /// How many saves happened.
        public var saveCount: Int { saves.withLock { $0 } }
    }

    public struct Environment: Sendable {
        /// Finds the nth prime (the seed asks Wolfram Alpha; this app computes it behind a delay).
        public var nthPrime: @Sendable (Int) async throws -> Int?
        public var files: FileClient
        public var clock: EffectClock

        public init(nthPrime: @escaping @Sendable (Int) async throws -> Int?, files: FileClient, clock: EffectClock) {
            self.nthPrime = nthPrime
            self.files = files
            self.clock = clock
        }

        /// A stand-in for the remote service (half a second per request) and files in `directory`.
        public static func live(directory: String) -> Environment {
            let clock = EffectClock.live
            return Environment(
                nthPrime: { n in
                    try await clock.sleep(.milliseconds(500))
                    return Primes.nthPrime(n)
                }, files: .live(directory: directory), clock: clock)
        }

        /// Answers at once, files in memory.
        public static func mock(files: MockFiles = MockFiles(), nthPrime: (@Sendable (Int) async throws -> Int?)? = nil) -> Environment {
            Environment(nthPrime: nthPrime ?? { Primes.nthPrime($0) }, files: .mock(files), clock: .mock())
        }
    }

    public static let favoritesFile = "favorite-primes.json"
    /// The largest n the service answers (beyond it: "no answer").
    public static let maxN = 100_000
    /// The largest prime a favourite may be, and how many there may be (``app(environment:)``'s validate).
    /// (At most 1,000 trial divisions up to √10,000,000 ≈ 3,163 each: a few million in all.)
    public static let maxFavorite = 10_000_000
    public static let maxFavorites = 1_000

    public static func isPrime(_ n: Int) -> Bool {
        guard n > 1 else { return false }
        if n < 4 { return true }
        if n % 2 == 0 { return false }
        var divisor = 3
        // `divisor <= n / divisor`, not `divisor * divisor <= n`: the square overflowed (a trap) for n
        // near Int.max, and the store crash-looped on one journaled action (issue 35).
        while divisor <= n / divisor {
            if n % divisor == 0 { return false }
            divisor += 2
        }
        return true
    }

    /// The nth prime (1: 2), or nil when n is out of the service's range.
    public static func nthPrime(_ n: Int) -> Int? {
        guard (1...maxN).contains(n) else { return nil }
        var found = 0, candidate = 1
        while found < n {
            candidate += 1
            if isPrime(candidate) { found += 1 }
        }
        return candidate
    }

    public static func ordinal(_ n: Int) -> String {
        let suffix =
            switch (n % 10, n % 100) {
            case (_, 11...13): "th"
            case (1, _): "st"
            case (2, _): "nd"
            case (3, _): "rd"
            default: "th"
            }
        return "\(n)\(suffix)"
    }

    enum CancelID: Hashable, Sendable { case nthPrime }

    /// Writes the favourites; sends nothing back (the seed's `Effect<Never>`).
    static func save(_ favorites: [Favorite], _ environment: Environment) -> Effect<Action> {
        .fireAndForget {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            guard let data = try? encoder.encode(favorites) else { return }
            try? await environment.files.save(favoritesFile, data)
        }
    }

    public static let core = Reducer<State, Action, Environment> { state, action, environment, stamp in
        switch action {
        case .incrementTapped:
            state.count &+= 1
            return .none
        case .decrementTapped:
            state.count &-= 1
            return .none
        case .nthPrimeTapped:
            guard state.isNthPrimeButtonEnabled else { return .none }
            state.isNthPrimeRequestInFlight = true
            let n = state.count
            return .run { send in
                let prime = try? await environment.nthPrime(n)
                if Task.isCancelled { return }
                send(.nthPrimeResponse(n: n, prime: prime))
            }
            .cancellable(id: CancelID.nthPrime, cancelInFlight: true)
        case .nthPrimeResponse(let n, let prime):
            state.isNthPrimeRequestInFlight = false
            state.alert = prime.map { "The \(ordinal(n)) prime is \($0)" } ?? "Could not find the \(ordinal(n)) prime"
            return .none
        case .alertDismissed:
            state.alert = nil
            return .none
        case .favoriteToggled:
            if state.isFavorite {
                state.favorites.removeAll { $0.prime == state.count }
            } else {
                state.favorites.append(Favorite(prime: state.count, savedAt: stamp.time))
            }
            return save(state.favorites, environment)
        case .favoriteRemoved(let prime):
            state.favorites.removeAll { $0.prime == prime }
            return save(state.favorites, environment)
        case .loadFavoritesTapped:
            return .run { send in
                guard let data = try? await environment.files.load(favoritesFile) else {
                    send(.favoritesLoaded(favorites: []))
                    return
                }
                send(.favoritesLoaded(favorites: (try? JSONDecoder().decode([Favorite].self, from: data)) ?? []))
            }
        case .favoritesLoaded(let favorites):
            state.favoritesLoaded = true
            // What the file held, then anything saved meanwhile (never a duplicate).
            let loaded = favorites.filter { isPrime($0.prime) }
            state.favorites = loaded + state.favorites.filter { saved in !loaded.contains { $0.prime == saved.prime } }
            return .none
        }
    }

    /// The reducer, with the alert of an earlier count cleared whenever the count moves.
    public static let reducer = core.onChange(of: \.count) { state, _, _ in
        state.alert = nil
        return .none
    }

    /// What only the current state can refuse.
    public static func reject(_ state: State, _ action: Action) -> String? {
        switch action {
        case .favoriteToggled where !state.isPrime && !state.isFavorite:
            "\(state.count) is not prime"
        case .nthPrimeTapped where state.isNthPrimeRequestInFlight:
            "a request for the nth prime is already running"
        case .nthPrimeTapped where state.count < 1:
            "count to 1 or more first"
        default:
            nil
        }
    }

    public static func render(_ state: State) -> String {
        var lines = ["count: \(state.count)" + (state.isPrime ? "  (prime\(state.isFavorite ? ", favourite ★" : ""))" : "")]
        lines.append("[What is the \(ordinal(max(state.count, 1))) prime?]" + (state.isNthPrimeRequestInFlight ? " asking…" : ""))
        if let alert = state.alert { lines.append("  ! \(alert)") }
        lines.append("favourite primes: " + (state.favorites.isEmpty ? "none" : state.favorites.map { "\($0.prime)" }.joined(separator: ", ")))
        return lines.joined(separator: "\n")
    }

    public static func app(environment: Environment) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "primes", summary: "Point-Free's counter: count, ask for the nth prime, keep favourite primes in a file",
            initialState: State(), reducer: reducer, environment: environment,
            validate: { action in
                switch action {
                case .favoriteRemoved(let prime) where prime < 2: return "\(prime) is not a prime"
                case .favoritesLoaded(let favorites) where favorites.count > maxFavorites:
                    return "at most \(maxFavorites) favourites, not \(favorites.count)"
                case .favoritesLoaded(let favorites):
                    // The reducer tests each for primality by trial division: bounded, so one action
                    // cannot keep the store busy for minutes.
                    if let big = favorites.first(where: { $0.prime > maxFavorite }) {
                        return "\(big.prime) is over \(maxFavorite), the largest favourite"
                    }
                    return nil
                default: return nil
                }
            },
            reject: reject, render: render,
            actions: [
                .user(.incrementTapped, "count up"),
                .user(.decrementTapped, "count down"),
                .user(.nthPrimeTapped, "ask for the nth prime, n being the count (the answer comes as an alert)"),
                .effect(.nthPrimeResponse(n: 5, prime: 11), "the answer to nthPrimeTapped (prime null: none found)"),
                .user(.alertDismissed, "dismiss the alert"),
                .user(.favoriteToggled, "save the count as a favourite prime, or remove it (saved to a file)"),
                .user(.favoriteRemoved(prime: 11), "remove a favourite prime"),
                .user(.loadFavoritesTapped, "load the favourite primes saved in the file"),
                .effect(
                    .favoritesLoaded(favorites: [Favorite(prime: 11, savedAt: Date(timeIntervalSince1970: 1_767_225_600))]),
                    "the favourites read from the file"),
            ])
    }
}

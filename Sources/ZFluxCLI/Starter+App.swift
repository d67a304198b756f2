/// The app: a tally, small enough to read in one sitting, with one user action that takes arguments,
/// one effect whose answer comes back as a later action, and a schedule that closes the poll.
extension Starter {
    var app: String {
        #"""
        import FluxCore
        import FluxWire

        /// A tally: people vote for options, and a ballot (the options to choose from) is loaded from a
        /// server by an effect, whose answer comes back through the dispatcher as a later action. The
        /// poll can be set to close itself after a while: the cluster keeps that schedule, even across a
        /// restart, and votes are refused once it has fired.
        ///
        /// Make it your own: a `State`, the `Action`s that happen to it (named after events), a pure
        /// `reducer`, and an `Environment` holding everything its effects need from the world.
        public enum \#(name) {
            /// The app's name: the topic its actions go to, and what `dispatch`, `state` and `view` name.
            public static let name = "\#(appName)"

            /// One option and its votes. `@WireCodable` generates its wire coding (the same bytes as
            /// `Codable`, without its cost on every action: docs/GUIDE.md).
            @WireCodable
            public struct Option: Codable, Equatable, Sendable {
                public var name: String
                public var votes: Int

                public init(name: String, votes: Int = 0) {
                    self.name = name
                    self.votes = votes
                }
            }

            @WireCodable
            public struct State: Codable, Equatable, Sendable {
                /// The options, in the order they were first voted for or loaded.
                public var options: [Option] = []
                /// Whether the ballot is being loaded.
                public var isLoading = false
                /// Why the last load failed, if it did.
                public var loadError: String? = nil
                /// Whether the poll has closed: no more votes.
                public var isClosed = false
                /// Whether it closed more than a second after its time: the cluster was down when it was due,
                /// and its schedule fired once it was up again (the action's stamp says so).
                public var closedLate = false

                public init(
                    options: [Option] = [], isLoading: Bool = false, loadError: String? = nil, isClosed: Bool = false, closedLate: Bool = false
                ) {
                    self.options = options
                    self.isLoading = isLoading
                    self.loadError = loadError
                    self.isClosed = isClosed
                    self.closedLate = closedLate
                }

                public var totalVotes: Int { options.reduce(0) { $0 + $1.votes } }
            }

            @WireCodable
            public enum Action: Codable, Equatable, Sendable {
                /// Someone voted for `option`; an option nobody named before is added with this vote.
                case voteCast(option: String)
                /// Someone asked for the ballot.
                case loadTapped
                /// The ballot arrived (sent by the load's effect).
                case ballotLoaded(options: [String])
                /// The ballot could not be loaded (sent by the load's effect).
                case ballotFailed(reason: String)
                /// Someone set the poll to close in `seconds`; asking again moves the time.
                case closeIn(seconds: Int)
                /// Someone called the closing off: the poll stays open.
                case keepOpen
                /// The poll closed (sent by the schedule `closeIn` made, when its time came).
                case pollClosed
            }

            /// What the effects need from the world, as closures: `live` for the cluster, `mock` for tests
            /// and `cluster up --mock`.
            public struct Environment: Sendable {
                /// Fetches the ballot: the options to vote on.
                public var loadBallot: @Sendable () async throws -> [String]

                public init(loadBallot: @escaping @Sendable () async throws -> [String]) {
                    self.loadBallot = loadBallot
                }

                /// A stand-in for a server: a short wait, then a fixed ballot. Replace it with your request.
                public static let live = Environment {
                    try await Task.sleep(for: .milliseconds(200))
                    return ["yes", "no", "maybe"]
                }

                /// The same ballot at once.
                public static let mock = Environment { ["yes", "no", "maybe"] }
            }

            /// The dispatcher's check of an action on its own, before it is sequenced: a reason refuses it.
            public static func validate(_ action: Action) -> String? {
                switch action {
                case .voteCast(let option):
                    if option.allSatisfy(\.isWhitespace) { return "an option needs a name" }
                    if option.count > 40 { return "an option's name has at most 40 characters" }
                case .closeIn(let seconds):
                    if !(1...maxOpenSeconds).contains(seconds) { return "a poll closes in 1 second to 7 days" }
                default:
                    break
                }
                return nil
            }

            /// The longest a poll stays open after `closeIn`: a week.
            public static let maxOpenSeconds = 7 * 24 * 3600

            /// The most options a tally takes from votes: a vote naming one more is refused.
            public static let maxOptions = 20

            /// The store's check of an action against the current state, before the reducer: a reason
            /// refuses it, the state stays as it was, and views and `tail` show the reason. `validate` could
            /// not make this check, since it sees the action alone. (A loaded ballot is the server's to size.)
            public static func reject(_ state: State, _ action: Action) -> String? {
                if state.isClosed, case .voteCast = action { return "the poll is closed" }
                guard case .voteCast(let option) = action, state.options.count >= maxOptions,
                    !state.options.contains(where: { $0.name == option })
                else { return nil }
                return "the tally takes at most \(maxOptions) options: vote for one of them"
            }

            /// The dispatcher's middleware, run on every action before it is sequenced: here, a count of
            /// each action under where it came from (`client`, `effect`), which `zflux status` shows.
            /// `context.origin` is proven by the cluster's effect token; without one it says `unverified`.
            public static let middleware: [Middleware<Action>] = [
                Middleware("origin", rewrites: false) { action, context in
                    context.count("\(context.app).\(ActionCoding.caseName(of: action)).\(context.origin)")
                }
            ]

            /// A pure function: no clock, no I/O. What it wants done in the world it returns as an effect. The
            /// time it needs it reads from the action's stamp, which the dispatcher journals with the action.
            public static let reducer = Reducer<State, Action, Environment> { state, action, environment, stamp in
                switch action {
                case .voteCast(let option):
                    if let index = state.options.firstIndex(where: { $0.name == option }) {
                        state.options[index].votes += 1
                    } else {
                        state.options.append(Option(name: option, votes: 1))
                    }
                    return .none
                case .loadTapped:
                    guard !state.isLoading else { return .none }  // a load is under way: its answer serves both
                    state.isLoading = true
                    state.loadError = nil
                    return .run { send in
                        do {
                            send(.ballotLoaded(options: try await environment.loadBallot()))
                        } catch is CancellationError {
                            // The store is stopping.
                        } catch {
                            send(.ballotFailed(reason: String(describing: error)))
                        }
                    }
                case .ballotLoaded(let options):
                    state.isLoading = false
                    for option in options where !state.options.contains(where: { $0.name == option }) {
                        state.options.append(Option(name: option))
                    }
                    return .none
                case .ballotFailed(let reason):
                    state.isLoading = false
                    state.loadError = reason
                    return .none
                case .closeIn(let seconds):
                    guard !state.isClosed else { return .none }
                    // Not a timer in this store, which a restart would lose: the dispatcher journals the
                    // schedule and sends `pollClosed` when it is due. The same id replaces an earlier time.
                    return .schedule(.pollClosed, after: .seconds(seconds), id: "close")
                case .keepOpen:
                    return .cancelSchedule(id: "close")
                case .pollClosed:
                    state.isClosed = true
                    state.closedLate = stamp.isLate
                    return .none
                }
            }

            /// The state as one line of text, for `\#(appName) view` when it is not a terminal.
            public static func render(_ state: State) -> String {
                var line = state.options.isEmpty ? "no votes yet" : state.options.map { "\($0.name) \($0.votes)" }.joined(separator: " · ")
                if state.isLoading { line += "  (loading the ballot…)" }
                if let error = state.loadError { line += "  ! \(error)" }
                if state.isClosed { line += state.closedLate ? "  (closed, late)" : "  (closed)" }
                return line
            }

            public static func app(environment: Environment = .live) -> FluxApp<State, Action, Environment> {
                FluxApp(
                    name: name, summary: "a tally: votes for options, and a ballot loaded by an effect", initialState: State(),
                    reducer: reducer, environment: environment, validate: validate, middleware: middleware,
                    reject: reject, render: render,
                    actions: [
                        .user(.voteCast(option: "yes"), "vote for an option (one nobody named before is added)"),
                        .user(.loadTapped, "load the ballot: the options to vote on"),
                        .effect(.ballotLoaded(options: ["yes", "no", "maybe"]), "the ballot, as the server sent it"),
                        .effect(.ballotFailed(reason: "timed out"), "why the ballot could not be loaded"),
                        .user(.closeIn(seconds: 3600), "close the poll in an hour (asking again moves the time)"),
                        .user(.keepOpen, "call the closing off: the poll stays open"),
                        .effect(.pollClosed, "the poll closed: its schedule fired"),
                    ])
            }
        }

        """#
    }
}

import FluxCore

/// A keyed state of any size, for load tests: `zflux bench` fills it with `--state-items` accounts and
/// then changes one account per action. Its state is an `IncrementalState`, so an update carries the
/// changed accounts only.
public enum Ledger {
    // @WireCodable: written out in Ledger+WireCodable.swift
    public struct Account: Codable, Equatable, Sendable {
        public var balance: Int
        public var memo: String
        public init(balance: Int = 0, memo: String = "") {
            self.balance = balance
            self.memo = memo
        }
    }

    // @WireCodable: written out in Ledger+WireCodable.swift
    public struct State: IncrementalState {
        public var accounts = TrackedDictionary<Int, Account>()
        /// How many postings were applied.
        public var postings = 0

        public init() {}

        // @WireCodable: written out in Ledger+WireCodable.swift
        public struct Changes: Codable, Sendable {
            public var accounts: TrackedDictionary<Int, Account>.Changes
            public var postings: Int
        }

        public mutating func takeChanges() -> Changes { Changes(accounts: accounts.takeChanges(), postings: postings) }

        public mutating func apply(_ changes: Changes) {
            accounts.apply(changes.accounts)
            postings = changes.postings
        }
    }

    // @WireCodable: written out in Ledger+WireCodable.swift
    public enum Action: Codable, Equatable, Sendable {
        /// Creates accounts 0..<count (keeping those that exist).
        case open(count: Int)
        /// Adds `amount` to one account (creating it), with a memo that can pad the action to a size.
        case post(account: Int, amount: Int, memo: String)
        case close(account: Int)
    }

    public static let maxAccounts = 1_000_000

    public static let reducer = Reducer<State, Action, Void> { state, action, _ in
        switch action {
        case .open(let count):
            for key in 0..<count where state.accounts[key] == nil { state.accounts[key] = Account() }
        case .post(let key, let amount, let memo):
            if state.accounts[key] == nil { state.accounts[key] = Account() }
            state.accounts.update(key) {
                $0.balance &+= amount
                $0.memo = memo
            }
            state.postings += 1
        case .close(let key):
            state.accounts.removeValue(forKey: key)
        }
        return .none
    }

    public static func app() -> FluxApp<State, Action, Void> {
        FluxApp(
            name: "ledger", summary: "a keyed state of any size for load tests (zflux bench); publishes changes only",
            initialState: State(), reducer: reducer, environment: (),
            validate: { action in
                switch action {
                case .open(let count) where count < 0 || count > maxAccounts: "count must be 0…\(maxAccounts)"
                case .post(let key, _, _), .close(let key): key < 0 ? "account must not be negative" : nil
                default: nil
                }
            },
            render: { state in
                let total = state.accounts.values.reduce(0) { $0 &+ $1.balance }
                return "\(state.accounts.count) accounts, \(state.postings) postings, total \(total)"
            },
            actions: [
                .user(.open(count: 1000), "create accounts 0..<count"),
                .user(.post(account: 7, amount: 100, memo: "rent"), "add an amount to an account"),
                .user(.close(account: 7), "remove an account"),
            ]
        )
    }
}

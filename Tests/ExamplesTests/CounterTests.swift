import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("Counter")
struct CounterTests {
    @Test("up, down, by an amount, and back to zero")
    func counting() async {
        let store = TestStore(Counter.app())
        await store.send(.incrementTapped) { $0.count = 1 }
        await store.send(.addTapped(amount: 41)) { $0.count = 42 }
        await store.send(.decrementTapped) { $0.count = 41 }
        await store.send(.addTapped(amount: -50)) { $0.count = -9 }
        await store.send(.resetTapped) { $0.count = 0 }
        await store.finish()
    }

    @Test("in a cluster: two stores of the same app agree")
    func cluster() async throws {
        let cluster = try await TestCluster.start(stores: ["counter": Counter.app(), "replica": Counter.app()])
        try await cluster.dispatch(Counter.Action.addTapped(amount: 5), to: "counter")
        let seq = try await cluster.dispatch(Counter.Action.decrementTapped, to: "counter")
        #expect(try await cluster.state(of: "counter", as: Counter.State.self, atLeast: seq) == Counter.State(count: 4))
        #expect(try await cluster.state(of: "replica", as: Counter.State.self, atLeast: seq) == Counter.State(count: 4))
        try await cluster.shutdown()
    }
}

@Suite("Ledger (the bench's keyed state)")
struct LedgerTests {
    @Test("opening, posting with a memo, closing; postings counted")
    func postings() async {
        let store = TestStore(Ledger.app())
        await store.send(.open(count: 2)) {
            $0.accounts[0] = Ledger.Account()
            $0.accounts[1] = Ledger.Account()
        }
        await store.send(.post(account: 1, amount: 30, memo: "rent")) {
            $0.accounts[1] = Ledger.Account(balance: 30, memo: "rent")
            $0.postings = 1
        }
        await store.send(.post(account: 5, amount: -4, memo: "")) {
            $0.accounts[5] = Ledger.Account(balance: -4)
            $0.postings = 2
        }
        await store.send(.close(account: 0)) { $0.accounts.removeValue(forKey: 0) }
        await store.finish()
        #expect(Ledger.app().validate(.open(count: Ledger.maxAccounts + 1)) != nil)
        #expect(Ledger.app().validate(.post(account: -1, amount: 1, memo: "")) == "account must not be negative")
    }
}

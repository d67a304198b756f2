import FluxCore
import FluxTesting
import Foundation
import Testing

/// A feature made to exercise every path of `TestStore`.
enum Probe {
    struct State: Codable, Equatable, Sendable {
        var count = 0
        var note = ""
    }

    enum Action: Codable, Equatable, Sendable {
        case increment
        case setNote(String)
        case echo(Int)  // an effect sends .echoed(n) back
        case echoed(Int)
        case hang  // an effect that never finishes on its own
        case cancelHang
        case silentChange  // changes the state; tests forget to assert it
    }

    struct Environment: Sendable {}

    enum ID: Hashable, Sendable { case hang }

    static let reducer = Reducer<State, Action, Environment> { state, action, _ in
        switch action {
        case .increment: state.count += 1; return .none
        case .setNote(let note): state.note = note; return .none
        case .echo(let n): return .run { send in send(.echoed(n)) }
        case .echoed(let n): state.count += n; return .none
        case .hang:
            return .run { _ in try? await Task.sleep(for: .seconds(3600)) }.cancellable(id: ID.hang)
        case .cancelHang: return .cancel(id: ID.hang)
        case .silentChange: state.note = "changed"; return .none
        }
    }
}

/// Collects the failures a TestStore reports, instead of failing this test.
final class FailureLog: @unchecked Sendable {
    // @unchecked: every access goes through the lock.
    private let lock = NSLock()
    private var messages: [String] = []
    var reporter: TestStore<Probe.State, Probe.Action, Probe.Environment>.FailureReporter {
        { message, _ in self.lock.withLock { self.messages.append(message) } }
    }
    var all: [String] { lock.withLock { messages } }
}

func probeStore(
    _ log: FailureLog, exhaustivity: TestStore<Probe.State, Probe.Action, Probe.Environment>.Exhaustivity = .on
)
    -> TestStore<Probe.State, Probe.Action, Probe.Environment>
{
    TestStore(
        initialState: Probe.State(), reducer: Probe.reducer, environment: Probe.Environment(),
        exhaustivity: exhaustivity, timeout: .milliseconds(300), reportFailure: log.reporter)
}

@Suite("TestStore reports every kind of failure")
struct TestStoreTests {
    @Test("a correct test passes without a single failure")
    func passes() async {
        let log = FailureLog()
        let store = probeStore(log)
        await store.send(.increment) { $0.count = 1 }
        await store.send(.echo(5))
        await store.receive(.echoed(5)) { $0.count = 6 }
        await store.send(.hang)
        await store.send(.cancelHang)
        await store.finish()
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("a wrong expected mutation fails, naming the action and showing the diff")
    func wrongMutation() async {
        let log = FailureLog()
        let store = probeStore(log)
        await store.send(.setNote("hello")) { $0.note = "goodbye" }
        await store.finish()
        let message = try! #require(log.all.first)
        #expect(log.all.count == 1)
        #expect(message.contains("'setNote(\"hello\")'"))
        #expect(message.contains(#"−   "note" : "goodbye""#), "\(message)")
        #expect(message.contains(#"+   "note" : "hello""#), "\(message)")
    }

    @Test("an unasserted state change fails in exhaustive mode")
    func unassertedChange() async {
        let log = FailureLog()
        let store = probeStore(log)
        await store.send(.silentChange)
        await store.finish()
        #expect(log.all.count == 1)
        #expect(log.all.first?.contains("changed the state, but the test asserted no change") == true)
    }

    @Test("an action an effect sent but the test never received fails at finish")
    func unreceivedAction() async {
        let log = FailureLog()
        let store = probeStore(log)
        await store.send(.echo(2))
        await store.finish()
        #expect(log.all.count == 1)
        #expect(log.all.first?.contains("never asserted: 'echoed(2)'") == true, "\(log.all)")
    }

    @Test("sending while a received action waits unasserted fails")
    func sendBeforeReceive() async {
        let log = FailureLog()
        let store = probeStore(log)
        await store.send(.echo(1))
        // Let the effect deliver before the next send.
        try? await Task.sleep(for: .milliseconds(50))
        await store.send(.increment) { $0.count = 1 }
        await store.receive(.echoed(1)) { $0.count = 2 }
        await store.finish()
        #expect(log.all.count == 1)
        #expect(log.all.first?.contains("were not yet asserted") == true, "\(log.all)")
    }

    @Test("receiving the wrong action fails, naming both")
    func wrongReceive() async {
        let log = FailureLog()
        let store = probeStore(log)
        await store.send(.echo(3))
        await store.receive(.echoed(4)) { $0.count = 4 }
        await store.finish()
        #expect(log.all.first?.contains("expected to receive 'echoed(4)', but received 'echoed(3)'") == true, "\(log.all)")
    }

    @Test("waiting for an action that never comes fails after the timeout")
    func nothingReceived() async {
        let log = FailureLog()
        let store = probeStore(log)
        await store.receive(.echoed(1))
        await store.finish()
        #expect(log.all.count == 1)
        #expect(log.all.first?.contains("no action arrived") == true)
    }

    @Test("an effect still running at the end fails")
    func effectStillRunning() async {
        let log = FailureLog()
        let store = probeStore(log)
        await store.send(.hang)
        await store.finish(timeout: .milliseconds(50))
        #expect(log.all.count == 1)
        #expect(log.all.first?.contains("1 effect(s) still running") == true, "\(log.all)")
    }

    @Test("non-exhaustive: only asserted fields are checked; skipped actions and running effects are allowed")
    func nonExhaustive() async {
        let log = FailureLog()
        let store = probeStore(log, exhaustivity: .off)
        await store.send(.silentChange)
        await store.send(.echo(1))
        await store.send(.echo(2))
        await store.receive(.echoed(2)) { $0.count = 3 }  // skips echoed(1), which still applies
        await store.send(.hang)
        await store.send(.setNote("x")) { $0.note = "x" }
        await store.finish(timeout: .milliseconds(50))
        #expect(log.all.isEmpty, "\(log.all)")
        #expect(store.state == Probe.State(count: 3, note: "x"))
    }

    @Test("non-exhaustive still catches a wrong asserted field")
    func nonExhaustiveCatches() async {
        let log = FailureLog()
        let store = probeStore(log, exhaustivity: .off)
        await store.send(.increment) { $0.count = 2 }
        await store.finish()
        #expect(log.all.count == 1)
    }

    @Test("the environment can be replaced per test")
    func environmentOverride() async {
        struct Env: Sendable { var value: Int }
        let reducer = Reducer<Int, String, Env> { state, _, env in
            state = env.value; return .none
        }
        let log = FailureLog()
        let store = TestStore(
            initialState: 0, reducer: reducer, environment: Env(value: 1),
            reportFailure: { message, _ in log.reporter(message, SourceLocation(fileID: "a/b", filePath: "b", line: 1, column: 1)) })
        store.environment = Env(value: 42)
        await store.send("go") { $0 = 42 }
        await store.finish()
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("rejections: an expected one passes, an unexpected one and a missing one fail")
    func rejections() async {
        let log = FailureLog()
        let store = TestStore(
            initialState: Probe.State(), reducer: Probe.reducer, environment: Probe.Environment(),
            reject: { state, action in action == .increment && state.count >= 1 ? "at most 1" : nil },
            reportFailure: log.reporter)
        await store.send(.increment) { $0.count = 1 }
        await store.send(.increment, rejectedWith: "at most 1")
        #expect(log.all.isEmpty, "\(log.all)")
        await store.send(.increment) { $0.count = 2 }
        #expect(log.all.last == "the app rejected 'increment': at most 1")
        await store.send(.increment, rejectedWith: "something else")
        #expect(log.all.last == "'increment' was rejected with 'at most 1', not 'something else'")
        await store.send(.setNote("x"), rejectedWith: "never")
        #expect(log.all.last?.contains("but it accepted it") == true)
        #expect(store.state.count == 1, "rejected actions changed nothing")
        await store.finish()
    }
}

import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Testing

@Suite("Star")
struct StarTests {
    @Test("star then unstar: staring → starred → unstaring → unstarred, counting stars")
    func starAndUnstar() async {
        let store = TestStore(Star.app(environment: .mock(succeeds: true)))
        await store.send(.starTapped) { $0.status = .staring }
        await store.receive(.starResponse(success: true)) {
            $0.status = .starred
            $0.count = 1
        }
        await store.send(.starTapped) { $0.status = .unstaring }
        await store.receive(.unstarResponse(success: true)) {
            $0.status = .unstarred
            $0.count = 0
        }
        await store.finish()
    }

    @Test("a failed request goes back to where it was and says so")
    func failure() async {
        let store = TestStore(Star.app(environment: .mock(succeeds: false)))
        await store.send(.starTapped) { $0.status = .staring }
        await store.receive(.starResponse(success: false)) {
            $0.status = .unstarred
            $0.lastError = "could not star"
        }
        #expect(store.state.count == 0)
        await store.finish()

        let starred = TestStore(
            initialState: Star.State(status: .starred, count: 3), reducer: Star.reducer,
            environment: .mock(succeeds: false))
        await starred.send(.starTapped) { $0.status = .unstaring }
        await starred.receive(.unstarResponse(success: false)) {
            $0.status = .starred
            $0.lastError = "could not unstar"
        }
        await starred.finish()
    }

    @Test("taps during a request are ignored, and so are answers that arrive in the wrong state")
    func ignored() async {
        let store = TestStore(initialState: Star.State(status: .staring), reducer: Star.reducer, environment: .mock(succeeds: true))
        await store.send(.starTapped)
        await store.send(.unstarResponse(success: true))
        await store.finish()
    }

    @Test("in a cluster: the delayed request's answer comes back as a later, sequenced action")
    func cluster() async throws {
        let cluster = try await TestCluster.start(stores: ["star": Star.app(environment: .mock(succeeds: true))])
        #expect(try await cluster.dispatch(Star.Action.starTapped, to: "star") == 1)
        #expect(try await cluster.state(of: "star", as: Star.State.self, atLeast: 2) == Star.State(status: .starred, count: 1))
        try await cluster.shutdown()
    }

    @Test("the renderer shows the button and the count")
    func render() {
        #expect(Star.render(Star.State(status: .starred, count: 1)) == "[★ Starred]  1 star")
        #expect(Star.render(Star.State(status: .unstarred, count: 2, lastError: "could not unstar")) == "[☆ Star]  2 stars  ! could not unstar")
    }
}

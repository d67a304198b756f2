import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Testing

@Suite("AnnotationFilter")
struct AnnotationFilterTests {
    @Test("toggling a type filter on and off; isFiltering follows")
    func toggle() async {
        let store = TestStore(AnnotationFilter.app())
        #expect(!store.state.isFiltering)
        await store.send(.filterToggled(filter: .photos)) { $0.active = [.photos] }
        #expect(store.state.isFiltering)
        await store.send(.filterToggled(filter: .photos)) { $0.active = [] }
        #expect(!store.state.isFiltering)
        await store.finish()
    }

    @Test("toggling an issue-specific filter activates the issue type filter")
    func issueFilterActivatesIssues() async {
        let store = TestStore(AnnotationFilter.app())
        await store.send(.filterToggled(filter: .issueOpen)) { $0.active = [.issues, .issueOpen] }
        await store.send(.filterToggled(filter: .assignedToMe)) { $0.active = [.issues, .issueOpen, .assignedToMe] }
        // Turning the issue filter off again leaves the issue type filter as the user set it.
        await store.send(.filterToggled(filter: .issueOpen)) { $0.active = [.issues, .assignedToMe] }
        await store.finish()
    }

    @Test("entering and leaving a group")
    func groups() async {
        let store = TestStore(AnnotationFilter.app())
        await store.send(.groupEntered(group: .issues)) { $0.openGroup = .issues }
        await store.send(.groupLeft) { $0.openGroup = nil }
        await store.finish()
    }

    @Test("resetting one group keeps the others; resetting all clears everything")
    func resets() async {
        let store = TestStore(
            initialState: AnnotationFilter.State(active: [.photos, .issues, .issueClosed, .assignedToMe]),
            reducer: AnnotationFilter.reducer, environment: .live)
        await store.send(.resetGroupTapped(group: .issues)) { $0.active = [.issues, .photos] }
        await store.send(.resetAllTapped) { $0.active = [] }
        await store.finish()
    }

    @Test("in a cluster: two stores hosting the same app stay identical")
    func replicas() async throws {
        let cluster = try await TestCluster.start(stores: ["filter": AnnotationFilter.app(), "filter-replica": AnnotationFilter.app()])
        for action: AnnotationFilter.Action in [
            .filterToggled(filter: .issueInReview), .groupEntered(group: .issues),
            .filterToggled(filter: .links), .resetGroupTapped(group: .issues),
        ] {
            try await cluster.dispatch(action, to: "filter")
        }
        let a = try await cluster.state(of: "filter", as: AnnotationFilter.State.self, atLeast: 4)
        let b = try await cluster.state(of: "filter-replica", as: AnnotationFilter.State.self, atLeast: 4)
        #expect(a == AnnotationFilter.State(active: [.issues, .links], openGroup: .issues))
        #expect(a == b)
        try await cluster.shutdown()
    }
}

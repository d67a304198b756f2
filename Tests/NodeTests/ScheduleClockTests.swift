import FluxClusterTesting
import FluxCore
import FluxTesting
import Foundation
import Testing

/// A reminder that rings by a schedule, so a cluster test can say when its time comes.
enum Reminder {
    struct State: Codable, Equatable, Sendable {
        var armed = false
        var pokes = 0
        var rings = 0
        /// What the ringing action's stamp said.
        var due: Date?
        var rangAt: Date?
    }

    enum Action: Codable, Equatable, Sendable {
        case arm(seconds: Int)
        case poke
        case ring
    }

    static let reducer = Reducer<State, Action, Void> { state, action, _, stamp in
        switch action {
        case .arm(let seconds):
            state.armed = true
            return .schedule(.ring, after: .seconds(seconds), id: "ring")
        case .poke:
            state.pokes += 1
        case .ring:
            state.armed = false
            state.rings += 1
            state.due = stamp.schedule?.due
            state.rangAt = stamp.time
        }
        return .none
    }

    static func app() -> FluxApp<State, Action, Void> {
        FluxApp(
            name: "reminder", initialState: State(), reducer: reducer, environment: (),
            actions: [.user(.arm(seconds: 60), "ring in a while"), .user(.poke, "count"), .user(.ring, "ring now")])
    }
}

@Suite("A TestCluster runs its dispatcher by a TestClock", .timeLimit(.minutes(2)))
struct ScheduleClockTests {
    @Test("a scheduled action fires only once the test advances the clock past its due time")
    func firesWhenAdvanced() async throws {
        let clock = TestClock()
        let start = clock.now
        let cluster = try await TestCluster.start(stores: ["reminder": Reminder.app()], clock: clock)
        try await cluster.dispatch(Reminder.Action.arm(seconds: 60), to: "reminder")
        // The store's effect asks the dispatcher for the schedule: advance only once it is journaled,
        // so its delay counts from the clock's start.
        try await eventually("the dispatcher to hold the schedule", timeout: .seconds(120)) {
            cluster.pendingSchedules() == 1
        }
        clock.advance(by: .seconds(59))
        // A poke sequenced after the advance: had the schedule fired by then, it would come first.
        try await cluster.dispatch(Reminder.Action.poke, to: "reminder")
        let before = try await cluster.state(of: "reminder", as: Reminder.State.self) { $0.pokes == 1 }
        #expect(before.rings == 0 && before.armed)
        #expect(cluster.pendingSchedules() == 1)

        clock.advance(by: .seconds(1))
        let after = try await cluster.state(of: "reminder", as: Reminder.State.self) { $0.rings > 0 }
        #expect(after.rings == 1 && !after.armed)
        #expect(after.due == start + 60)
        #expect(after.rangAt == start + 60, "stamped by the clock the dispatcher runs by")
        #expect(cluster.pendingSchedules() == 0)
        try await cluster.shutdown()
    }
}

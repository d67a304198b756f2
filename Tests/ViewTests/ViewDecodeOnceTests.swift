import FluxCore
import Foundation
import Logging
import NodeCores
import Synchronization
import Testing

@testable import ViewNode

/// The view path decodes once: a store's update is decoded into the view's replica, and a typed screen
/// renders the replica's value and the one before it, with no encode of the whole state and no decode
/// of it again. What stays the same draws nothing new.
@Suite("A view decodes each update once", .serialized)
struct ViewDecodeOnceTests {
    /// How often a tally was decoded (whole, or as changes) and encoded whole.
    static let decodes = Atomic<Int>(0)
    static let encodes = Atomic<Int>(0)

    /// A state whose coding counts itself, and that publishes its changes only.
    struct Tally: IncrementalState {
        var count = 0

        struct Changes: Codable, Sendable {
            var count: Int
            init(count: Int) { self.count = count }
            init(from decoder: any Decoder) throws {
                _ = ViewDecodeOnceTests.decodes.wrappingAdd(1, ordering: .relaxed)
                count = try decoder.singleValueContainer().decode(Int.self)
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(count)
            }
        }

        init(count: Int = 0) { self.count = count }
        init(from decoder: any Decoder) throws {
            _ = ViewDecodeOnceTests.decodes.wrappingAdd(1, ordering: .relaxed)
            count = try decoder.singleValueContainer().decode(Int.self)
        }
        func encode(to encoder: any Encoder) throws {
            _ = ViewDecodeOnceTests.encodes.wrappingAdd(1, ordering: .relaxed)
            var container = encoder.singleValueContainer()
            try container.encode(count)
        }
        mutating func takeChanges() -> Changes { Changes(count: count) }
        mutating func apply(_ changes: Changes) { count = changes.count }
    }

    enum Action: Codable, Sendable { case counted }

    /// Renders the count and the one before it; counts its renders.
    struct TallyScreen: TypedScreen {
        static let app = "tally"
        nonisolated(unsafe) static var renders: [(Int, Int?)] = []
        init() {}
        func render(state: Tally, previous: Tally?, width: Int) -> Frame {
            TallyScreen.renders.append((state.count, previous?.count))
            return [StyledLine("\(state.count)")]
        }
        mutating func handle(_ key: Key, state: Tally) -> ScreenOutcome<Action> { .ignored }
        var help: String { "" }
    }

    static let app = FluxApp<Tally, Action, Void>(
        name: "tally", initialState: Tally(),
        reducer: Reducer { state, _, _ in
            state.count += 1; return .none
        }, environment: ())

    static func at(_ ms: UInt64) -> NodeTime { NodeTime(milliseconds: ms, wallNanoseconds: Int64(ms) * 1_000_000) }

    func counts() -> (decodes: Int, encodes: Int) {
        (Self.decodes.load(ordering: .relaxed), Self.encodes.load(ordering: .relaxed))
    }

    @Test(
        "one decode per update and no encode of the state; the screen gets the typed state and the one before; a heartbeat or an idle tick renders nothing"
    )
    func decodeOnce() throws {
        var rules = ViewRules(store: "tally", app: Self.app)
        // What a terminal with a typed screen asks for: no bytes of the state, only its typed value.
        rules.materializesState = false
        let view = ViewCore(rules: rules, now: Self.at(0), logger: Logger(label: "test"))
        var shown = InteractiveView.Shown()
        var body = KeptBody()
        TallyScreen.renders = []
        let screen = TallyScreen()
        func drain() -> Bool {
            var changed = false
            for case .show(let update) in view.takeCommands() where shown.take(update) { changed = true }
            _ = body.frame(width: 20, room: 5, changed: changed) { screen.render(shown: shown, width: 20) ?? [] }
            return changed
        }

        view.start(now: Self.at(0))
        let whole = try WireCodec().encode(Tally(count: 1))
        let before = counts()
        view.receivedSnapshot(Message(topic: "tally", header: Header(kind: .snapshot, flags: .fullState, seq: 1), payload: whole), now: Self.at(1))
        #expect(drain())
        #expect(counts().decodes - before.decodes == 1, "the snapshot is decoded once, into the replica")
        for version in UInt64(2)...4 {
            let changes = try WireCodec().encode(Tally.Changes(count: Int(version)))
            let start = counts()
            view.receivedUpdate(
                Message(topic: "tally", header: Header(kind: .state, seq: version, ref: version - 1), payload: changes), now: Self.at(version))
            view.endOfBurst()
            #expect(drain())
            #expect(counts().decodes - start.decodes == 1, "update \(version): its changes decoded once, the state not again")
            #expect(counts().encodes == start.encodes, "update \(version): the state is not encoded again")
        }
        #expect(TallyScreen.renders.map(\.0) == [1, 2, 3, 4])
        #expect(TallyScreen.renders.map(\.1) == [nil, 1, 2, 3], "each render gets the state before it, typed")

        // Nothing new: a heartbeat saying the state is current further on, and ticks.
        let idle = counts()
        view.receivedUpdate(Message(topic: "tally", header: Header(kind: .heartbeat, seq: 4, ref: 9)), now: Self.at(10))
        #expect(!drain(), "a heartbeat moves the status bar, not the state")
        for tick in UInt64(11)...13 {
            view.tick(now: Self.at(tick))
            #expect(!drain())
        }
        #expect(TallyScreen.renders.count == 4, "nothing rendered again")
        #expect(counts().decodes == idle.decodes && counts().encodes == idle.encodes)
        #expect(shown.update?.currentThrough == 9)
    }

    @Test("a view that hands its subscriber bytes still encodes them, and carries the typed state beside them")
    func materializedViewStillHasBytes() throws {
        let view = ViewCore(rules: ViewRules(store: "tally", app: Self.app), now: Self.at(0), logger: Logger(label: "test"))
        view.start(now: Self.at(0))
        view.receivedSnapshot(
            Message(topic: "tally", header: Header(kind: .snapshot, flags: .fullState, seq: 1), payload: try WireCodec().encode(Tally(count: 1))),
            now: Self.at(1))
        view.receivedUpdate(
            Message(topic: "tally", header: Header(kind: .state, seq: 2, ref: 1), payload: try WireCodec().encode(Tally.Changes(count: 7))),
            now: Self.at(2))
        view.endOfBurst()
        let last = try #require(view.takeCommands().compactMap { if case .show(let update) = $0 { update } else { nil } }.last)
        #expect(try WireCodec().decode(Tally.self, from: last.state).count == 7)
        #expect((last.typedState?.value as? Tally)?.count == 7)
    }
}

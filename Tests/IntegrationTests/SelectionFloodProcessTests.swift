import FluxCore
import FluxTesting
import Foundation
import Testing
import ZeroMQ

/// Peers flooding a store's state publisher with selection subscriptions (hardening round 3), against
/// the real binary, while a real `zflux view --select` follows a part of the state.
@Suite("Selection floods (real processes)", .serialized, .timeLimit(.minutes(3)))
struct SelectionFloodProcessTests {
    @Test("four peers repeating and cycling selection subscriptions for 3 s: the view stays live and current, the store stays responsive and small")
    func flood() async throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        #expect(try cluster.zflux(["dispatch", "todo", "addTodo", #"{"title":"a task to read"}"#, "--repeat", "200"]).status == 0)
        let endpoint = try #require(cluster.topology?.store(named: "todo")?.state)
        let store = try #require(cluster.currentPid("store-todo"))

        // A real view of the first todo's title, its JSON lines collected as they come.
        let view = try Follower(zfluxBinary, ["view", "todo", "--select", "todos[0].title", "--json", "--run-dir", cluster.runDir])
        defer { view.stop() }
        try await eventually("the view's first line", timeout: .seconds(30)) { !view.lines.isEmpty }
        let rssBefore = try #require(residentKilobytes(store))

        // Four peers: each repeats one selection and cycles through 400 others, as fast as it can.
        let peers = try (0..<4).map { _ in
            let socket = try Socket(.shared, .xsub)
            try socket.setOption(.linger, 0)
            try socket.connect(endpoint)
            return socket
        }
        defer { peers.forEach { $0.close() } }
        let started = ContinuousClock.now
        var sent = 0
        while ContinuousClock.now - started < .seconds(3) {
            for (index, peer) in peers.enumerated() {
                _ = try peer.send([[0x01] + Array("?todo/todos[0]".utf8)], dontWait: true)
                _ = try peer.send([[0x01] + Array("?todo/k\(index)-\(sent % 400)".utf8)], dontWait: true)
            }
            sent += 1
            if sent == 2_000 {
                // Mid-flood: a change the view must show.
                #expect(try cluster.zflux(["dispatch", "todo", "addTodo", #"{"title":"during the flood"}"#]).status == 0)
            }
        }
        #expect(try cluster.zflux(["dispatch", "todo", "addTodo", #"{"title":"after the flood"}"#]).status == 0)
        try await eventually("the view shows the change made after the flood", timeout: .seconds(30)) {
            view.lines.contains { $0.contains("\"value\":\"after the flood\"") }
        }
        let seen = view.lines
        #expect(!seen.contains { $0.contains("\"connection\":\"stale\"") }, "the view never went stale: \(seen.suffix(5))")
        #expect(cluster.currentPid("store-todo") == store, "the store was never restarted")
        let state = try cluster.zflux(["state", "todo", "--timeout", "2"])
        #expect(state.status == 0, "the store answers: \(state.stderr)")
        let rssAfter = try #require(residentKilobytes(store))
        #expect(rssAfter - rssBefore < 64 * 1024, "the store grew from \(rssBefore / 1024) MiB to \(rssAfter / 1024) MiB")
        #expect(sent > 1_000, "the flood sent \(sent * 8) subscriptions")
    }
}

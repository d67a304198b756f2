import Examples
import FluxCore
import FluxTesting
import Foundation
import Testing
import ZeroMQ

/// `--select`: a view of a part of a state is woken only when that part changes.
@Suite("Selections of a state (real processes)", .serialized, .timeLimit(.minutes(2)))
struct SelectTests {
    /// Every message that arrives on `socket` within `milliseconds`.
    func drain(_ socket: Socket, milliseconds: Int) throws -> [Message] {
        var messages: [Message] = []
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while ContinuousClock.now < deadline {
            var poller = Poller()
            poller.add(.socket(socket))
            guard try poller.poll(timeoutMilliseconds: 50) > 0 else { continue }
            while let frames = try socket.receive(dontWait: true) { if let message = try? Message(frames: frames) { messages.append(message) } }
        }
        return messages
    }

    func subscriber(_ endpoint: String, topic: String) throws -> Socket {
        let socket = try Socket(.shared, .sub)
        try socket.setOption(.linger, 0)
        try socket.subscribe(Array(topic.utf8))
        try socket.connect(endpoint)
        return socket
    }

    @Test("a selection's topic carries the selected value once on joining and again only when it changes; heartbeats keep it live")
    func selectionWakesOnlyOnItsChanges() async throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let endpoint = try #require(cluster.topology?.store(named: "login")?.state)
        let selection = try subscriber(endpoint, topic: "?login/username")
        defer { selection.close() }
        let whole = try subscriber(endpoint, topic: "login")
        defer { whole.close() }

        // On joining: the current value, at once.
        var joined: [Message] = []
        try await eventually("the selection's first value", timeout: .seconds(60)) {
            joined += try drain(selection, milliseconds: 100).filter { $0.kind == .state }
            return !joined.isEmpty
        }
        #expect(joined.first?.topicString == "?login/username" && joined.first?.payload == Array(#""""#.utf8))

        // Changes elsewhere in the state: the whole state's subscribers hear them, the selection does not.
        for password in ["a", "ab", "abc", "abcd", "abcde"] {
            let sent = try cluster.zflux(["dispatch", "login", "passwordChanged", "{\"password\":\"\(password)\"}"])
            try #require(sent.status == 0, "\(sent.stderr)")
        }
        _ = try await waitForState(cluster, "login", version: 5, as: Login.State.self)
        let quiet = try drain(selection, milliseconds: 600)
        #expect(quiet.filter { $0.kind == .state }.isEmpty, "the selection was sent \(quiet.filter { $0.kind == .state }.count) updates")
        #expect(quiet.contains { $0.kind == .heartbeat && $0.header.ref >= 5 }, "heartbeats on the selection's topic say how far the store got")
        #expect(try drain(whole, milliseconds: 100).filter { $0.kind == .state }.count >= 1)

        // A change of the selected part: one update, with the value and the seq that changed it.
        _ = try cluster.zflux(["dispatch", "login", "usernameChanged", #"{"username":"ada@example.com"}"#])
        var changed: [Message] = []
        try await eventually("the selection's update", timeout: .seconds(60)) {
            changed += try drain(selection, milliseconds: 100).filter { $0.kind == .state }
            return !changed.isEmpty
        }
        #expect(changed.count == 1 && changed.first?.payload == Array(#""ada@example.com""#.utf8) && changed.first?.header.seq == 6)

        // The CLI reads the path, and says what is wrong with a bad one.
        let bad = try cluster.zflux(["view", "login", "--select", "username[", "--json"])
        #expect(bad.status != 0 && bad.stderr.contains("expected an index like [0]"), "\(bad.stderr)")
        let two = try cluster.zflux(["view", "login", "todo", "--select", "username", "--json"])
        #expect(two.status != 0 && two.stderr.contains("name one store"), "\(two.stderr)")
    }
}

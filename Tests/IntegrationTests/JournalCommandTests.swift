import Examples
import FluxCore
import Foundation
import Testing

@Suite("zflux journal commands", .serialized, .timeLimit(.minutes(2)))
struct JournalCommandTests {
    @Test("dump, tail and time travel read what the cluster journaled")
    func commands() async throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let titles = ["one", "two", "three", "four"]
        for title in titles { _ = try cluster.zflux(["dispatch", "todo", "addTodo", "{\"title\":\"\(title)\"}"]) }
        #expect(try cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":7}"#]).stdout == "5\n")

        struct Line: Decodable { var seq: UInt64; var app: String; var type: String; var payload: [String: [String: String]]? }
        let dump = try cluster.zflux(["journal", "dump", "--from", "2", "--to", "3"])
        let lines = dump.stdout.split(separator: "\n").compactMap { try? JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
        #expect(lines.map(\.seq) == [2, 3])
        #expect(lines.first?.payload?["addTodo"]?["title"] == "two")

        let tail = try cluster.zflux(["journal", "tail", "-n", "1"])
        #expect(tail.stdout.contains("\"seq\":5") && tail.stdout.contains("\"app\":\"counter\""))

        struct Replayed: Decodable { var version: UInt64; var state: Todo.State }
        let past = try JSONDecoder().decode(
            Replayed.self, from: Data(try cluster.zflux(["journal", "replay", "--store", "todo", "--to", "2"]).stdout.utf8))
        #expect(past.version == 2)
        #expect(past.state.todos.map(\.title) == ["two", "one"], "as of seq 2: the newest todo on top")
        let now = try JSONDecoder().decode(Replayed.self, from: Data(try cluster.zflux(["journal", "replay", "--store", "todo"]).stdout.utf8))
        #expect(now.state == (try await waitForState(cluster, "todo", version: 5, as: Todo.State.self)), "replaying everything gives the live state")
        #expect(try cluster.zflux(["journal", "verify"]).stdout.contains("ok"))
    }
}

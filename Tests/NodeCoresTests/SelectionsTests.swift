import FluxCore
import Testing

@testable import NodeCores

@Suite("Selections: views following a part of the state")
struct SelectionsTests {
    func path(_ text: String) throws -> StatePath { try StatePath(parsing: text) }

    func state(count: Double, name: String) -> JSONValue { .object(["count": .number(count), "name": .string(name)]) }

    @Test("a changed value is reported once, at the version it changed at; an unchanged one not at all")
    func changes() throws {
        var selections = Selections(limit: 4)
        let count = try path("count"), name = try path("name")
        #expect(selections.follow("?s/count", path: count, value: .number(1), published: 3) == 3)
        #expect(selections.follow("?s/name", path: name, value: .string("a"), published: 3) == 3)
        let changed = selections.changes(in: state(count: 2, name: "a"), at: 5)
        #expect(changed.map(\.topic) == ["?s/count"] && changed.first?.value == .number(2))
        #expect(selections["?s/count"]?.version == 5 && selections["?s/name"]?.version == 3)
        #expect(selections.changes(in: state(count: 2, name: "a"), at: 6).isEmpty)
        #expect(selections.follow("?s/count", path: count, value: .number(2), published: 9) == 5, "followed already: its own version")
    }

    @Test("at most `limit` followed; one that is followed already, or leaves, makes no difference")
    func bounded() throws {
        var selections = Selections(limit: 2)
        _ = selections.follow("?s/a", path: try path("a"), value: .null, published: 0)
        _ = selections.follow("?s/b", path: try path("b"), value: .null, published: 0)
        #expect(!selections.canFollow("?s/c") && selections.canFollow("?s/a"))
        selections.unfollow("?s/a")
        #expect(selections.canFollow("?s/c") && selections.sorted.map(\.topic) == ["?s/b"])
    }

    @Test("refused and asked-for topics stay bounded however many distinct ones a peer sends, and go with their topic")
    func rememberedIsBounded() throws {
        var selections = Selections(limit: 1, hardLimit: 8)
        _ = selections.follow("?s/a", path: try path("a"), value: .null, published: 0)
        for index in 0..<1_000 {
            selections.refuse("?s/r\(index)")
            selections.asked("?s/q\(index)", by: [UInt8(index % 200)])
        }
        #expect(selections.remembered.refused == 32 && selections.remembered.asked == 32, "hardLimit * 4 each")
        // The newest is always kept: its view is the one about to claim it.
        #expect(selections.canClaim("?s/r999", by: [1]))
        selections.asked("?s/q999", by: [9])
        #expect(selections.takeAsker(of: "?s/q999") == [9] && selections.takeAsker(of: "?s/q999") == nil)
        selections.asked("?s/gone", by: [3])
        selections.unfollow("?s/gone")
        #expect(selections.takeAsker(of: "?s/gone") == nil, "a topic's last follower left: nothing of it stays")
    }
}

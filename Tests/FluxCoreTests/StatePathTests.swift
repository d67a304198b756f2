import FluxCore
import Foundation
import Testing

@Suite("State paths (--select)")
struct StatePathTests {
    let state: JSONValue

    init() throws {
        state = try #require(JSONValue.parse(Data(#"{"todos":[{"title":"a","done":false},{"title":"b","done":true}],"count":2}"#.utf8)))
    }

    @Test("fields and indexes select parts of a state; a path that leads nowhere selects null")
    func select() throws {
        #expect(try StatePath(parsing: "count").select(in: state) == .number(2))
        #expect(try StatePath(parsing: "todos[1].title").select(in: state) == .string("b"))
        #expect(try StatePath(parsing: "todos[1]").select(in: state) == .object(["title": .string("b"), "done": .bool(true)]))
        #expect(try StatePath(parsing: "todos[5].title").select(in: state) == .null)
        #expect(try StatePath(parsing: "count.more").select(in: state) == .null)
        #expect(try StatePath(parsing: "todos[0].done").description == "todos[0].done")
    }

    @Test("bad paths are refused with where and what was expected")
    func errors() {
        for (text, expected) in [
            ("", "an empty path"), ("todos[", "expected an index like [0] at character 6"), ("todos..x", "expected a field name at character 7"),
            ("[0]x", "expected '.' or '[' at character 4"), ("a b", "expected '.' or '[' at character 2"),
        ] {
            #expect(throws: ActionError.self) { try StatePath(parsing: text) }
            do { _ = try StatePath(parsing: text) } catch { #expect(error.reason.contains(expected), "\(text): \(error.reason)") }
        }
    }

    @Test("a selection's topic never starts with a store's name, so views of the whole store never get it")
    func topics() throws {
        let path = try StatePath(parsing: "todos[0].title")
        #expect(path.topic(store: "todo") == "?todo/todos[0].title")
        #expect(!path.topic(store: "todo").hasPrefix("todo"))
        #expect(StatePath.fromTopic("?todo/todos[0].title", store: "todo") == path)
        #expect(StatePath.fromTopic("?todos/x", store: "todo") == nil && StatePath.fromTopic("todo", store: "todo") == nil)
    }
}

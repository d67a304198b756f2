import Examples
import FluxCore
import NodeCores
import Testing

/// A store applies the actions of an ACTION-BATCH and of a REPLAY-BATCH from the batch's bytes, and an
/// app's runtime decodes them with its generated decoder first: neither may change what an action
/// does. Three stores of the real todo app take the same actions (some refused by the state, one
/// malformed, one quarantined, one of another app), one store as single ACTIONs, one in an ACTION-BATCH
/// and one in a REPLAY-BATCH, and must end in the same state with the same refusals.
@Suite("Store core: actions applied from a batch's bytes as from single messages")
struct BatchApplyTests {
    typealias F = CoreFixtures

    func payload(_ action: Todo.Action) -> [UInt8] {
        do {
            return try BinaryPayloadCodec().encode(action)
        } catch {
            Issue.record(error, "encoding \(action)")
            return []
        }
    }

    /// The actions, seqs 1…n, as the dispatcher sequences them.
    func actions() -> [Message] {
        var parts: [(topic: String, type: String, payload: [UInt8], quarantined: Bool)] = [
            ("todo", "addTodo", payload(.addTodo(title: "milk")), false),
            ("todo", "addTodo", payload(.addTodo(title: "eggs")), false),
            ("todo", "toggleTodo", payload(.toggleTodo(index: 7)), false),  // refused: no item 7
            ("todo", "toggleTodo", payload(.toggleTodo(index: 0)), false),
            ("counter", "incrementTapped", F.increment, false),  // another app's: passed by
            ("todo", "addTodo", payload(.addTodo(title: "quarantined")), true),
            ("todo", "removeTodo", payload(.removeTodo(index: 5)), false),  // refused: no item 5
        ]
        let whole = payload(.addTodo(title: "bread"))
        parts.append(("todo", "addTodo", Array(whole.dropLast(2)), false))  // cut short: refused, and says so
        parts.append(("todo", "clearCompleted", payload(.clearCompleted), false))
        return parts.enumerated().map { index, part in
            var header = Header(
                kind: .action, seq: UInt64(index + 1), clientID: 9, clientSeq: UInt64(index + 1), timestamp: Int64(index) * 1000,
                actionType: part.type)
            if part.quarantined { header.flags.insert(.quarantined) }
            return Message(topic: Array(part.topic.utf8), header: header, payload: part.payload)
        }
    }

    func makeStore() -> StoreCore {
        let app = Todo.app()
        let core = StoreCore(rules: StoreRules(name: "todo", app: app), snapshot: nil, effectClientID: 7, now: F.at(0), logger: F.logger) {
            app.makeRuntime { _, _, _ in }
        }
        core.start(now: F.at(0))
        _ = core.takeCommands()
        return core
    }

    /// What a store ends with: its version, its state and the refusals it published (seq and reason).
    func outcome(_ core: StoreCore) throws -> (UInt64, [UInt8], [String]) {
        let refusals = core.takeCommands().compactMap(\.published).filter { $0.kind == .rejected }
            .map { "\($0.header.seq) \($0.header.actionType): \(String(decoding: $0.payload, as: UTF8.self))" }
        return (core.version, try core.encodedState(), refusals)
    }

    @Test("single ACTIONs, one ACTION-BATCH and one REPLAY-BATCH leave the same state and the same refusals")
    func sameOutcome() throws {
        let actions = actions()

        let singles = makeStore()
        singles.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        for action in actions { singles.receivedFromDispatcher(action, now: F.at(2)) }

        // The live batches of one app each, as the dispatcher publishes them: runs of one topic.
        let live = makeStore()
        live.receivedReplay(F.replayEnd(head: 0), now: F.at(1))
        var start = 0
        while start < actions.count {
            var end = start
            while end < actions.count && actions[end].topic == actions[start].topic { end += 1 }
            let run = Array(actions[start..<end])
            live.receivedFromDispatcher(
                Message(
                    topic: run[0].topic, header: Header(kind: .actionBatch, seq: run[0].header.seq, ref: run[run.count - 1].header.seq),
                    payload: ReplayBatch.encode(run)), now: F.at(2))
            start = end
        }

        let replayed = makeStore()
        replayed.receivedReplay(
            Message(header: Header(kind: .replayBatch, seq: 1, ref: UInt64(actions.count)), payload: ReplayBatch.encode(actions)), now: F.at(1))
        replayed.receivedReplay(F.replayEnd(head: UInt64(actions.count)), now: F.at(2))

        let expected = try outcome(singles)
        #expect(expected.0 == UInt64(actions.count))
        // What the singles store did is what each action should do: two items added, one done and
        // cleared, the refusals named.
        let state = try BinaryPayloadCodec().decode(Todo.State.self, from: expected.1)
        #expect(state.todos.map(\.title) == ["milk"], "new items go first: eggs was toggled, then cleared")
        #expect(expected.2.count == 4, "\(expected.2)")
        #expect(expected.2.contains { $0.hasPrefix("3 toggleTodo: there is no todo at index 7") })
        #expect(expected.2.contains { $0.hasPrefix("7 removeTodo: there is no todo at index 5") })
        #expect(expected.2.contains { $0.hasPrefix("6 addTodo: quarantined") })
        #expect(expected.2.contains { $0.hasPrefix("8 addTodo") && $0.contains("not a well-formed binary value") })
        for (name, store) in [("ACTION-BATCH", live), ("REPLAY-BATCH", replayed)] {
            let found = try outcome(store)
            #expect(found.0 == expected.0 && found.1 == expected.1, "\(name): the same version and state")
            #expect(found.2 == expected.2, "\(name): the same refusals")
            #expect(store.quarantined.map(\.seq) == [6], "\(name): the quarantined action listed")
        }
    }
}

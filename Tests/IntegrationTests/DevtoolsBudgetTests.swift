import Examples
import FluxCore
import Foundation
import NodeSupport
import Testing

/// What the devtools' memory and its one worker can be made to hold by pages that misbehave, on real
/// processes (docs/GUARANTEES.md, "Bounds under hostile or broken peers"): big actions and pages that
/// never read cost bounded bytes, given back when they leave; connections that hold the cap idle give
/// way; and the worker takes the pages in turn.
@Suite("Devtools budgets and fairness (real processes)", .serialized, .timeLimit(.minutes(5)))
struct DevtoolsBudgetTests {
    static func string(_ object: [String: Any]?, _ key: String) -> String? { object?[key] as? String }

    /// `body` with a cluster and its devtools, stopped and removed after.
    func withDevtools(_ name: String, _ body: (ClusterProcess, DevtoolsProcess) throws -> Void) throws {
        let (cluster, dir) = try devtoolsCluster(name)
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let devtools = try DevtoolsProcess(runDir: cluster.runDir)
        defer { devtools.stop() }
        try body(cluster, devtools)
    }

    @Test(
        "300 posts of which half are 900 KiB, then 12 pages that never read: devtools stays within its byte budget, the pages' memory comes back when they leave, and a reading page sees every seq"
    )
    func bigActionsAndPagesThatNeverRead() throws {
        try withDevtools("never-read") { cluster, devtools in
            let topology = try #require(cluster.topology)
            let pid = devtools.process.pid
            let rest = try #require(residentKilobytes(pid))
            // Growth allowed, KiB: before, the recent actions alone held 150 × 900 KiB, and each page
            // that joined was sent them as one message of its own.
            let bound = 96 * 1024
            let connection = try DispatchConnection(intake: topology.dispatcher.intake)
            defer { connection.close() }
            let codec = JSONPayloadCodec()
            let big = String(repeating: "y", count: 900 << 10)
            var last: UInt64 = 0
            // An item added with a big title and removed again: the stream carries the big actions while
            // todo's state stays small.
            for index in 0..<150 {
                for (type, action) in [("addTodo", Todo.Action.addTodo(title: "\(index) " + big)), ("removeTodo", .removeTodo(index: 0))] {
                    guard case .acknowledged(let seq) = try connection.dispatch(app: "todo", actionType: type, payload: try codec.encode(action))
                    else { throw NodeError("post \(index) \(type) was not acknowledged") }
                    last = seq
                }
            }
            // A page that reads sees the last seq, in its welcome or the stream after it.
            let deadline = ContinuousClock.now + .seconds(120)
            let reader = try WebSocketClient(port: devtools.port, timeoutSeconds: 5)
            func sawLast(_ message: [String: Any]) -> Bool {
                Self.string(message, "kind") == "actions"
                    && (message["actions"] as? [[String: Any]] ?? []).contains { $0["seq"] as? Int == Int(last) }
            }
            var seen = false
            while !seen && ContinuousClock.now < deadline && !reader.ended { seen = reader.receiveJSON(until: deadline, where: sawLast) != nil }
            #expect(seen, "the reading page never saw seq \(last)")
            var grewTo = residentKilobytes(pid) ?? 0
            #expect(grewTo - rest <= bound, "with the actions kept, devtools grew from \(rest >> 10) MiB to \(grewTo >> 10) MiB")

            // Twelve pages that never read, each with a receive buffer so small that what it is sent
            // piles up on the server's side; opened one by one, stopping before the machine suffers.
            var stalled: [WebSocketClient] = []
            for _ in 0..<12 where grewTo - rest <= 4 * bound {
                stalled.append(try WebSocketClient(port: devtools.port, receiveBufferBytes: 4096))
                grewTo = max(grewTo, residentKilobytes(pid) ?? 0)
            }
            // More posts while they sit there; the reader goes on reading.
            for index in 0..<20 {
                for (type, action) in [("addTodo", Todo.Action.addTodo(title: "late \(index) " + big)), ("removeTodo", .removeTodo(index: 0))] {
                    guard case .acknowledged(let seq) = try connection.dispatch(app: "todo", actionType: type, payload: try codec.encode(action))
                    else { throw NodeError("late post \(index) \(type) was not acknowledged") }
                    last = seq
                }
                grewTo = max(grewTo, residentKilobytes(pid) ?? 0)
            }
            seen = false
            while !seen && ContinuousClock.now < deadline && !reader.ended {
                seen = reader.receiveJSON(until: deadline, where: sawLast) != nil
                grewTo = max(grewTo, residentKilobytes(pid) ?? 0)
            }
            #expect(seen, "the reading page never saw seq \(last) with the stalled pages open")
            #expect(
                stalled.count == 12 && grewTo - rest <= bound,
                "with \(stalled.count) stalled pages devtools grew from \(rest >> 10) MiB to \(grewTo >> 10) MiB")

            // They leave: what they held is given back.
            stalled = []
            var after = residentKilobytes(pid) ?? .max
            let leaveDeadline = ContinuousClock.now + .seconds(60)
            while after - rest > bound / 2 && ContinuousClock.now < leaveDeadline {
                _ = reader.receive()
                after = residentKilobytes(pid) ?? .max
            }
            #expect(after - rest <= bound / 2, "after the pages left devtools is at \(after >> 10) MiB, from \(rest >> 10) MiB at rest")
        }
    }

    @Test("16 connections that send half a request hold no page load: each new one makes room at once, and all 10 loads are answered")
    func slowRequestsGiveWay() throws {
        try withDevtools("slowloris") { _, devtools in
            var slow: [Int32] = []
            defer { slow.forEach { close($0) } }
            for _ in 0..<16 {
                let fd = try #require(connectLoopback(devtools.port))
                let part = Array("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(devtools.port)\r\n".utf8)
                _ = part.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                slow.append(fd)
            }
            let answered = (0..<10).filter { _ in httpGet(devtools.port, "/")?.0 == 200 }.count
            #expect(answered == 10, "\(answered) of 10 page loads were answered")
        }
    }

    @Test("16 WebSockets that hold the cap and stay silent give way to a new page once silent for 30 s")
    func silentPagesGiveWay() throws {
        try withDevtools("idle-pages") { _, devtools in
            // Silent: they never send a frame, nor answer the pings.
            let silent = try (0..<16).map { _ in try WebSocketClient(port: devtools.port, timeoutSeconds: 2) }
            let deadline = ContinuousClock.now + .seconds(120)
            var joined: WebSocketClient?
            var refusedFirst = false
            while joined == nil && ContinuousClock.now < deadline {
                do {
                    let page = try WebSocketClient(port: devtools.port, timeoutSeconds: 2)
                    if page.receiveJSON(until: ContinuousClock.now + .seconds(10), where: { Self.string($0, "kind") == "hello" }) != nil {
                        joined = page
                    } else {
                        refusedFirst = true
                    }
                } catch {
                    refusedFirst = true
                    // The next try, once the one refused has gone: at most a few a second.
                    _ = poll(nil, 0, 250)
                }
            }
            #expect(refusedFirst, "the cap was not reached by the 16 silent pages")
            #expect(joined != nil, "no new page got in while 16 silent ones held the cap")
            withExtendedLifetime(silent) {}
        }
    }

    @Test("four pages that keep the worker busy do not make a fifth page's request wait behind theirs: the worker takes pages in turn")
    func workerTakesPagesInTurn() throws {
        try withDevtools("fair-worker") { cluster, devtools in try takePagesInTurn(cluster, devtools) }
    }

    /// The test's body, a method of its own: inside the closure, Swift 6.3.1's region analysis crashed on it.
    func takePagesInTurn(_ cluster: ClusterProcess, _ devtools: DevtoolsProcess) throws {
        // A journal long enough that each time travel to its head takes the worker a while.
        let filled = try cluster.zflux(["dispatch", "counter", "incrementTapped", "--repeat", "3000"], timeout: .seconds(180))
        try #require(filled.status == 0, "\(filled.stderr)")
        let deadline = ContinuousClock.now + .seconds(120)
        let greedy = try (0..<4).map { _ in try WebSocketClient(port: devtools.port, timeoutSeconds: 5) }
        for page in greedy {
            #expect(page.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" } != nil)
            // 30 at once: under the burst a page may send (40), far over what the worker answers at once.
            for id in 1...30 { page.send(#"{"op":"at","id":\#(id),"seq":3000,"token":"\#(devtools.token)"}"#) }
        }
        let fifth = try WebSocketClient(port: devtools.port, timeoutSeconds: 5)
        #expect(fifth.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" } != nil)
        // The greedy pages' answers, counted as they come: those before the fifth page's request,
        // and those between it and its answer, which in turn are at most one per page ahead of it
        // (and the one running); in one queue in order, it waited behind every one of theirs.
        let answers = Answers(pages: greedy)
        answers.take(waiting: 0)
        let before = answers.travelled
        fifth.send(#"{"op":"range","id":1}"#)
        var answer: [String: Any]?
        while answer == nil && ContinuousClock.now < deadline && !fifth.ended {
            var entry = pollfd(fd: fifth.fd, events: Int16(POLLIN), revents: 0)
            if fifth.hasBuffered || poll(&entry, 1, 0) > 0 {
                // One frame at a time, so that the greedy pages' answers are counted as they come.
                guard let frame = fifth.receive(), frame.opcode == 0x1,
                    let message = try? JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any]
                else { continue }
                if message["id"] as? Int == 1 { answer = message }
            } else {
                answers.take(waiting: 50)
            }
        }
        #expect(Self.string(answer, "kind") == "range", "the fifth page's request: \(answer ?? [:])")
        let ahead = answers.travelled - before
        #expect(ahead <= 2 * greedy.count, "the fifth page's request waited behind \(ahead) of the greedy pages' answers")
        while answers.count < 30 * greedy.count && ContinuousClock.now < deadline { answers.take(waiting: 1000) }
        // Each greedy page had its own share: what it sent past it was answered busy, the rest travelled.
        for mine in answers.byPage {
            let travelled = mine.filter { Self.string($0, "kind") == "at" }.count
            let busy = mine.filter { Self.string($0, "message")?.hasPrefix("busy") == true }.count
            #expect(travelled >= 1 && busy >= 1 && travelled + busy == 30, "travelled \(travelled), busy \(busy)")
        }
    }

    /// The answers pages get to their requests, each page's in order, read as they come.
    final class Answers {
        let pages: [WebSocketClient]
        private(set) var byPage: [[[String: Any]]]

        init(pages: [WebSocketClient]) {
            self.pages = pages
            byPage = Array(repeating: [], count: pages.count)
        }

        var count: Int { byPage.map(\.count).reduce(0, +) }
        /// How many were time travels (not "busy").
        var travelled: Int { byPage.joined().filter { DevtoolsBudgetTests.string($0, "kind") == "at" }.count }

        /// Reads what has come, waiting at most `milliseconds` for something to.
        func take(waiting milliseconds: Int32) {
            var entries = pages.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard pages.contains(where: \.hasBuffered) || poll(&entries, nfds_t(entries.count), milliseconds) > 0 else { return }
            for (index, page) in pages.enumerated() where page.hasBuffered || entries[index].revents != 0 {
                repeat {
                    guard let frame = page.receive(), frame.opcode == 0x1,
                        let message = try? JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any], message["id"] is Int
                    else { continue }
                    byPage[index].append(message)
                } while page.hasBuffered
            }
        }
    }
}

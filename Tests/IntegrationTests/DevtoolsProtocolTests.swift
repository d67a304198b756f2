import Foundation
import Testing

/// `zflux devtools`' WebSocket, spoken by a Swift client against a real cluster: what a page gets,
/// what it may ask, and who is turned away (docs/OPERATIONS.md, "The devtools page").
@Suite("Devtools WebSocket protocol (real processes)", .serialized, .timeLimit(.minutes(3)))
struct DevtoolsProtocolTests {
    static func string(_ object: [String: Any]?, _ key: String) -> String? { object?[key] as? String }

    @Test("a page gets the stores, their live states and the catalog; it dispatches, sees the state change and travels back")
    func liveDispatchAndTravel() throws {
        let (cluster, dir) = try devtoolsCluster("protocol")
        let devtools = try DevtoolsProcess(runDir: cluster.runDir)
        defer {
            devtools.stop()
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let page = try WebSocketClient(port: devtools.port, origin: "http://127.0.0.1:\(devtools.port)")
        let deadline = ContinuousClock.now + .seconds(30)
        let hello = try #require(page.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" })
        let stores = (hello["stores"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(stores == ["todo", "counter"])
        let apps = (hello["apps"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        #expect(apps.contains("todo") && apps.contains("counter"))
        #expect(hello["tokenRequired"] as? Bool == true)
        // The todo store's live state, from its snapshot.
        #expect(page.receiveJSON(until: deadline) { Self.string($0, "kind") == "state" && Self.string($0, "store") == "todo" } != nil)

        let token = devtools.token
        page.send(#"{"op":"dispatch","id":7,"app":"todo","type":"addTodo","arguments":"{\"title\":\"from the page\"}","token":"\#(token)"}"#)
        let answer = try #require(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 7 })
        #expect(Self.string(answer, "outcome") == "ack", "\(answer)")
        let seq = try #require(answer["seq"] as? Int)
        // The live state follows.
        let live = page.receiveJSON(until: deadline) { message in
            guard Self.string(message, "kind") == "state", Self.string(message, "store") == "todo",
                let state = message["state"], let data = try? JSONSerialization.data(withJSONObject: state)
            else { return false }
            return String(decoding: data, as: UTF8.self).contains("from the page")
        }
        #expect(live != nil, "no live state of todo with the new item")

        // A NACK is shown as one: an action the app does not have.
        page.send(#"{"op":"dispatch","id":8,"app":"todo","type":"noSuchAction","arguments":"{}","token":"\#(token)"}"#)
        let refused = try #require(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 8 })
        #expect(["nack", "refused"].contains(Self.string(refused, "outcome")), "\(refused)")

        // Time travel: the states at the action's seq and the one before, and the action itself.
        page.send(#"{"op":"at","id":9,"seq":\#(seq),"token":"\#(token)"}"#)
        let travel = try #require(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 9 })
        let todo = try #require((travel["stores"] as? [[String: Any]])?.first { $0["name"] as? String == "todo" }, "\(travel)")
        func text(_ value: Any?) -> String {
            value.flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.fragmentsAllowed]) }.map {
                String(decoding: $0, as: UTF8.self)
            } ?? ""
        }
        #expect(text(todo["state"]).contains("from the page"))
        #expect(!text(todo["previous"]).contains("from the page"))
        #expect((travel["action"] as? [String: Any])?["type"] as? String == "addTodo")

        page.send(#"{"op":"range","id":10}"#)
        let range = try #require(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 10 })
        #expect((range["head"] as? Int ?? 0) >= seq && range["first"] as? Int == 1, "\(range)")

        // A session file of the journal, as `journal export` writes it; more than a page may export is refused.
        page.send(#"{"op":"export","id":11,"from":1,"to":\#(seq),"token":"\#(token)"}"#)
        let exported = try #require(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 11 })
        // The file's text, as a string, so no 64-bit number in it passes through a JavaScript double.
        let text = try #require(exported["session"] as? String, "\(exported)")
        let session = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let actions = session["actions"] as? [[String: Any]] ?? []
        #expect(actions.count == seq && actions.last?["type"] as? String == "addTodo", "\(actions.map { $0["type"] ?? "?" })")
        #expect((session["stores"] as? [[String: Any]])?.count == 2 && session["format"] as? String == "zflux-session/1")
        // A stretch past the head ends at it; one that starts past it is refused.
        page.send(#"{"op":"export","id":12,"from":1,"to":20000,"token":"\#(token)"}"#)
        let clamped = try #require(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 12 })
        #expect(clamped["to"] as? Int == range["head"] as? Int && clamped["session"] is String, "\(clamped)")
        page.send(#"{"op":"export","id":13,"from":20000,"to":20001,"token":"\#(token)"}"#)
        let beyond = try #require(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 13 })
        #expect(Self.string(beyond, "error")?.contains("beyond the journal's head") == true, "\(beyond)")
    }

    @Test(
        "the welcome ends with a welcomed message, after the hello and every store's state; a store's refusal brings the page its state current through the refused seq"
    )
    func welcomeEndsAndRefusalAdvancesVersion() throws {
        let (cluster, dir) = try devtoolsCluster("welcome")
        let devtools = try DevtoolsProcess(runDir: cluster.runDir)
        defer {
            devtools.stop()
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        // The devtools hold both stores' states before the page joins.
        try #require(try cluster.zflux(["dispatch", "--wait", "todo", "addTodo", #"{"title":"first one"}"#]).status == 0)
        let deadline = ContinuousClock.now + .seconds(30)
        var seen: [String] = []
        var joined = false
        for _ in 0..<20 where !joined {
            let page = try WebSocketClient(port: devtools.port, origin: "http://127.0.0.1:\(devtools.port)")
            seen = []
            let welcomed = page.receiveJSON(until: deadline) { message in
                seen.append([Self.string(message, "kind"), Self.string(message, "store")].compactMap { $0 }.joined(separator: " "))
                return Self.string(message, "kind") == "welcomed"
            }
            #expect(welcomed != nil, "\(seen)")
            // A page that joined before the devtools had both states is asked again.
            joined = seen.contains("state todo") && seen.contains("state counter")
            if !joined { usleep(200_000) }
        }
        #expect(seen.first == "hello" && seen.last == "welcomed" && joined, "\(seen)")

        let page = try WebSocketClient(port: devtools.port, origin: "http://127.0.0.1:\(devtools.port)")
        #expect(page.receiveJSON(until: deadline) { Self.string($0, "kind") == "welcomed" } != nil)
        let refused = try cluster.zflux(["dispatch", "todo", "removeTodo", #"{"index":9}"#])
        let seq = try #require(Int(refused.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(refused.stderr)")
        let current = page.receiveJSON(until: ContinuousClock.now + .seconds(10)) { message in
            Self.string(message, "kind") == "state" && Self.string(message, "store") == "todo" && (message["version"] as? Int ?? 0) >= seq
        }
        #expect(current != nil, "no state of todo current through the refused seq \(seq)")
    }

    @Test(
        "on loopback with no token set, a dispatch, time travel and an export need the token the printed address carries; viewing needs none"
    )
    func loopbackNeedsToken() throws {
        // Any local user reaches 127.0.0.1, while the cluster's own sockets sit in the 0700 run
        // directory: loopback is no credential. Without this, another user dispatched and exported.
        let (cluster, dir) = try devtoolsCluster("loopback-token")
        let devtools = try DevtoolsProcess(runDir: cluster.runDir, environment: ["ZFLUX_DEVTOOLS_TOKEN": ""])
        defer {
            devtools.stop()
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let token = devtools.token
        #expect(devtools.url.hasPrefix("http://127.0.0.1:") && token.count == 32, "a fresh token in the address: \(devtools.url)")
        let page = try WebSocketClient(port: devtools.port)
        let deadline = ContinuousClock.now + .seconds(30)
        #expect(page.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" }?["tokenRequired"] as? Bool == true)
        // Viewing: the live states come without a token.
        #expect(page.receiveJSON(until: deadline) { Self.string($0, "kind") == "state" && Self.string($0, "store") == "counter" } != nil)

        let requests = [
            #"{"op":"dispatch","app":"counter","type":"incrementTapped","arguments":"{}""#, #"{"op":"at","seq":0"#,
            #"{"op":"export","from":1,"to":1"#,
        ]
        var id = 0
        func ask(_ request: String, token: String?) -> [String: Any]? {
            id += 1
            page.send(request + #","id":\#(id)"# + (token.map { #","token":"\#($0)""# } ?? "") + "}")
            return page.receiveJSON(until: deadline) { ($0["id"] as? Int) == id }
        }
        // None, and a wrong one: each refused, and nothing dispatched.
        for request in requests {
            for given in [nil, "0123456789abcdef0123456789abcdef"] {
                let answer = ask(request, token: given)
                let reason = Self.string(answer, "reason") ?? Self.string(answer, "error") ?? ""
                #expect(
                    reason.contains(given == nil ? "needs a token" : "not one this devtools takes"),
                    "\(request) with \(given ?? "no token"): \(answer ?? [:])")
            }
        }
        let range = ask(#"{"op":"range""#, token: nil)
        #expect(range?["head"] as? Int == 0, "nothing was dispatched without the token: \(range ?? [:])")
        // With the token the address carries, all three are done.
        let dispatched = ask(requests[0], token: token)
        #expect(Self.string(dispatched, "outcome") == "ack", "\(dispatched ?? [:])")
        let travelled = ask(requests[1], token: token)
        #expect(travelled?["stores"] is [Any], "\(travelled ?? [:])")
        let exported = ask(requests[2], token: token)
        #expect(exported?["session"] is String, "\(exported ?? [:])")
    }

    @Test("time travel to a quarantined action skips it as the stores do: the page's at and zflux state --at answer, and devtools lives")
    func travelOverQuarantine() throws {
        let (cluster, dir) = try devtoolsCluster(
            "quarantine",
            extraConfig: """
                [[store]]
                name = "drill"
                [restart]
                max_restarts = 10
                window_s = 60
                """)
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let topology = try #require(cluster.topology)
        func dispatch(_ action: String, _ payload: String? = nil) throws -> Int {
            let sent = try cluster.zflux(["dispatch", "drill", action] + (payload.map { [$0] } ?? []))
            try #require(sent.status == 0, "\(sent.stderr)")
            return try #require(Int(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        _ = try dispatch("tick")
        let poison = try dispatch("crash", #"{"note":"poison"}"#)
        let after = try dispatch("tick")
        // The store dies on it twice and has it quarantined.
        let deadline = ContinuousClock.now + .seconds(90)
        var quarantined = false
        while !quarantined && ContinuousClock.now < deadline {
            let status = try cluster.zflux(["status", "--endpoint", topology.dispatcher.intake])
            let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            quarantined = (object?["quarantined"] as? [[String: Any]] ?? []).contains { $0["seq"] as? Int == poison }
            if !quarantined { _ = poll(nil, 0, 200) }
        }
        try #require(quarantined, "seq \(poison) was never quarantined")

        // zflux state --at, at the poison seq and after it.
        for (seq, count) in [(poison, 1), (after, 2)] {
            let state = try cluster.zflux(["state", "drill", "--at", "\(seq)"])
            #expect(state.status == 0 && state.stdout.contains(#""count":\#(count)"#), "state --at \(seq): \(state)")
        }
        // The page's at: answered, the action shown as quarantined, and devtools goes on.
        let devtools = try DevtoolsProcess(runDir: cluster.runDir)
        defer { devtools.stop() }
        let page = try WebSocketClient(port: devtools.port)
        page.send(#"{"op":"at","id":1,"seq":\#(poison),"token":"\#(devtools.token)"}"#)
        let answer = page.receiveJSON(until: ContinuousClock.now + .seconds(60)) { ($0["id"] as? Int) == 1 }
        #expect(answer?["quarantined"] as? Bool == true, "\(answer ?? [:])")
        let drill = (answer?["stores"] as? [[String: Any]])?.first { $0["name"] as? String == "drill" }
        #expect((drill?["state"] as? [String: Any])?["count"] as? Int == 1, "\(answer ?? [:])")
        page.send(#"{"op":"range","id":2}"#)
        #expect(page.receiveJSON(until: ContinuousClock.now + .seconds(30)) { ($0["id"] as? Int) == 2 } != nil, "devtools answers after")
    }

    @Test("another site's Origin, a Host that is not loopback's, a missing token, too many requests and too many connections are refused")
    func refusals() throws {
        let (cluster, dir) = try devtoolsCluster("refusals")
        let devtools = try DevtoolsProcess(
            runDir: cluster.runDir, extraArguments: ["--max-connections", "2"], environment: ["ZFLUX_DEVTOOLS_TOKEN": "sesame"])
        defer {
            devtools.stop()
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let port = devtools.port
        // The address it prints opens the page with the token, so the page's form can dispatch.
        #expect(devtools.url.hasSuffix("/#token=sesame"), "\(devtools.url)")
        // Cross-site WebSocket hijacking, and DNS rebinding (a name of the attacker's that resolves to 127.0.0.1).
        #expect(throws: WebSocketClient.Refused.self) { try WebSocketClient(port: port, origin: "http://evil.example") }
        #expect(throws: WebSocketClient.Refused.self) {
            try WebSocketClient(port: port, host: "evil.example:\(port)", origin: "http://evil.example:\(port)")
        }
        // A name that starts like a loopback address is a name like any other: its owner says where it points.
        #expect(throws: WebSocketClient.Refused.self) {
            try WebSocketClient(port: port, host: "127.evil.example:\(port)", origin: "http://127.evil.example:\(port)")
        }
        do {
            _ = try WebSocketClient(port: port, origin: "http://evil.example")
        } catch let refused as WebSocketClient.Refused {
            #expect(refused.status == 403 && refused.body.contains("Origin"), "\(refused)")
        }

        let deadline = ContinuousClock.now + .seconds(30)
        let page = try WebSocketClient(port: port, host: "localhost:\(port)", origin: "http://localhost:\(port)", timeoutSeconds: 2)
        let hello = page.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" }
        #expect(hello?["tokenRequired"] as? Bool == true)
        page.send(#"{"op":"dispatch","id":1,"app":"counter","type":"incrementTapped","arguments":"{}"}"#)
        #expect(Self.string(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 1 }, "outcome") == "refused")
        page.send(#"{"op":"dispatch","id":2,"app":"counter","type":"incrementTapped","arguments":"{}","token":"sesame"}"#)
        #expect(Self.string(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 2 }, "outcome") == "ack")

        // The connection cap (2): a second page is let in, a third is closed at once.
        let second = try WebSocketClient(port: port, timeoutSeconds: 2)
        #expect(throws: (any Error).self) { try WebSocketClient(port: port, timeoutSeconds: 2) }
        withExtendedLifetime(second) {}

        // Requests past the rate close the page.
        for index in 0..<200 { page.send(#"{"op":"noop","id":\#(100 + index)}"#) }
        #expect(page.closedByServer(before: ContinuousClock.now + .seconds(20)), "200 requests at once did not close the page")
    }
}

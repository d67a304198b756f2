import Devtools
import Examples
import FluxCore
import Foundation
import NodeSupport
import Synchronization
import Testing

/// The devtools' rules that guard the server itself, on real processes (docs/OPERATIONS.md, "The
/// devtools page"): the frame-size cap, a page that stops reading, the loopback default, and the
/// cluster config's `[devtools]` section.
@Suite("Devtools limits and config (real processes)", .serialized, .timeLimit(.minutes(5)))
struct DevtoolsLimitsTests {
    static func string(_ object: [String: Any]?, _ key: String) -> String? { object?[key] as? String }

    @Test("a frame of 64 KiB is read; one byte more closes that page, and the server goes on serving another")
    func frameCap() throws {
        let (cluster, dir) = try devtoolsCluster("frames")
        let devtools = try DevtoolsProcess(runDir: cluster.runDir)
        defer {
            devtools.stop()
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let deadline = ContinuousClock.now + .seconds(30)
        let page = try WebSocketClient(port: devtools.port)
        let other = try WebSocketClient(port: devtools.port)
        #expect(page.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" } != nil)
        #expect(other.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" } != nil)

        // A request padded to exactly the cap (unknown keys are ignored) is answered.
        func request(id: Int, bytes: Int) -> [UInt8] {
            let head = #"{"op":"range","id":\#(id),"pad":""#
            return Array((head + String(repeating: "x", count: bytes - head.utf8.count - 2) + #""}"#).utf8)
        }
        let atCap = request(id: 1, bytes: 64 << 10)
        #expect(atCap.count == 64 << 10)
        page.send(atCap)
        #expect(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 1 } != nil, "a frame of exactly 64 KiB was not answered")

        page.send(request(id: 2, bytes: (64 << 10) + 1))
        #expect(page.closedByServer(before: ContinuousClock.now + .seconds(20)), "a frame one byte over 64 KiB did not close the page")

        // The other page is still served, and a new one is let in.
        other.send(#"{"op":"range","id":3}"#)
        #expect(other.receiveJSON(until: deadline) { ($0["id"] as? Int) == 3 } != nil, "the other page got no answer after the first was closed")
        let late = try WebSocketClient(port: devtools.port)
        #expect(late.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" } != nil)
    }

    /// A process's peak resident set (VmHWM), in bytes.
    static func peakResidentBytes(_ pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes << 10
    }

    @Test(
        "a page that stops reading while the stores change fast is closed: the server's memory stays bounded and another page gets every update"
    )
    func stalledPage() throws {
        let (cluster, dir) = try devtoolsCluster("stalled")
        let devtools = try DevtoolsProcess(runDir: cluster.runDir)
        defer {
            devtools.stop()
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let topology = try #require(cluster.topology)
        let deadline = ContinuousClock.now + .seconds(150)
        // It connects, then never reads, with a receive buffer so small that what the server sends it
        // piles up on the server's side.
        let stalled = try WebSocketClient(port: devtools.port, receiveBufferBytes: 4096)
        let reader = try WebSocketClient(port: devtools.port, timeoutSeconds: 5)
        #expect(reader.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" } != nil)

        // Make todo's state large (40 items of 64 KiB, about 2.5 MB of JSON), then keep changing it,
        // so every flush sends each page the whole state again. The changes follow the reader: one
        // toggle for each frame it gets, so the cluster is not flooded (a view's queue of states
        // falling behind would grow the devtools' memory for a reason of its own).
        let stop = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)
        let frameRead = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let intake = topology.dispatcher.intake
        Thread {
            defer { finished.signal() }
            do {
                let connection = try DispatchConnection(intake: intake)
                defer { connection.close() }
                let codec = JSONPayloadCodec()
                var count = 0
                while !stop.load(ordering: .acquiring) {
                    if count >= 40 && frameRead.wait(timeout: .now() + .seconds(1)) == .timedOut { continue }
                    let (type, action): (String, Todo.Action) =
                        count < 40
                        ? ("addTodo", .addTodo(title: "item \(count) " + String(repeating: "z", count: 64 << 10)))
                        : ("toggleTodo", .toggleTodo(index: 0))
                    let outcome = try connection.dispatch(app: "todo", actionType: type, payload: try codec.encode(action))
                    guard case .acknowledged = outcome else {
                        failure.withLock { $0 = "dispatch \(count): \(outcome)" }
                        return
                    }
                    count += 1
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }.start()

        // Were the server to buffer for the stalled page, it would hold what the reader received
        // (less what the sockets hold): the reader takes in well over the bound set on the server's
        // memory, so a server that buffers without limit goes past it.
        let residentBound = 320 << 20
        let volume = 640 << 20
        var received = 0
        while received < volume && ContinuousClock.now < deadline && failure.withLock({ $0 }) == nil {
            guard let frame = reader.receive() else {
                if reader.ended { break }
                continue
            }
            received += frame.payload.count
            frameRead.signal()
        }
        stop.store(true, ordering: .releasing)
        finished.wait()
        if let failure = failure.withLock({ $0 }) { Issue.record("the dispatching thread failed: \(failure)") }
        #expect(received >= volume, "the page that reads got \(received >> 20) MiB of updates, not \(volume >> 20) MiB, by the deadline")
        let peak = try #require(Self.peakResidentBytes(devtools.process.pid))
        #expect(peak < residentBound, "devtools' peak resident memory is \(peak >> 20) MiB, past \(residentBound >> 20) MiB")

        // The reader still gets what comes next; the stalled page was closed (what the sockets held
        // drains, then the stream ends).
        let connection = try DispatchConnection(intake: intake)
        defer { connection.close() }
        let marker = "after the stall"
        let outcome = try connection.dispatch(
            app: "todo", actionType: "addTodo", payload: try JSONPayloadCodec().encode(Todo.Action.addTodo(title: marker)))
        guard case .acknowledged = outcome else { throw NodeError("the last dispatch: \(outcome)") }
        var seen = false
        while !seen && ContinuousClock.now < deadline {
            guard let frame = reader.receive() else {
                if reader.ended { break }
                continue
            }
            seen = frame.payload.firstRange(of: Array(marker.utf8)) != nil
        }
        #expect(seen, "the page that reads never saw the state after the stall")
        #expect(stalled.closedByServer(before: ContinuousClock.now + .seconds(30)), "the page that stopped reading was not closed")
    }

    @Test(
        "a page's export of a large state stops at its 16 MiB budget and says to run journal export, which streams the whole stretch to a file; devtools' memory stays bounded"
    )
    func exportBudget() throws {
        let (cluster, dir) = try devtoolsCluster("export-budget")
        let devtools = try DevtoolsProcess(runDir: cluster.runDir)
        defer {
            devtools.stop()
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let topology = try #require(cluster.topology)
        // todo's state made large (40 items of 64 KiB, about 2.6 MB of JSON), then toggled 120 times:
        // each toggle's recorded state is the whole of it, about 310 MB over the stretch.
        let connection = try DispatchConnection(intake: topology.dispatcher.intake)
        defer { connection.close() }
        let codec = JSONPayloadCodec()
        var head = 0
        for count in 0..<160 {
            let (type, action): (String, Todo.Action) =
                count < 40
                ? ("addTodo", .addTodo(title: "item \(count) " + String(repeating: "z", count: 64 << 10)))
                : ("toggleTodo", .toggleTodo(index: count % 40))
            guard case .acknowledged(let seq) = try connection.dispatch(app: "todo", actionType: type, payload: try codec.encode(action))
            else { throw NodeError("dispatch \(count) was not acknowledged") }
            head = Int(seq)
        }

        let page = try WebSocketClient(port: devtools.port, timeoutSeconds: 5)
        let deadline = ContinuousClock.now + .seconds(120)
        #expect(page.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" } != nil)
        page.send(#"{"op":"export","id":1,"from":41,"to":\#(head),"token":"\#(devtools.token)"}"#)
        var answer: [String: Any]?
        while answer == nil && ContinuousClock.now < deadline && !page.ended {
            answer = page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 1 }
        }
        let error = Self.string(answer, "error") ?? ""
        #expect(error.contains("16 MiB") && error.contains("journal export --from 41 --to \(head)"), "\(answer ?? [:])")
        // Were the export held whole (each state as a parsed tree, then the file, then it as a string),
        // devtools would have grown by a gigabyte.
        let peak = try #require(Self.peakResidentBytes(devtools.process.pid))
        #expect(peak < 256 << 20, "devtools' peak resident memory is \(peak >> 20) MiB")
        // A small stretch still exports, and devtools goes on serving the page.
        page.send(#"{"op":"export","id":2,"from":41,"to":41,"token":"\#(devtools.token)"}"#)
        var small: [String: Any]?
        while small == nil && ContinuousClock.now < deadline && !page.ended {
            small = page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 2 }
        }
        #expect(small?["session"] is String, "\(small ?? [:])")

        // journal export writes the whole stretch, in parts, to the file.
        let file = dir + "/whole.json"
        let exported = try cluster.zflux(["journal", "export", "--from", "41", "--to", "\(head)", "-o", file], timeout: .seconds(120))
        #expect(exported.status == 0, "\(exported.stderr)")
        let session = try Session.load(file)
        #expect(session.actions.count == head - 40 && session.actions.allSatisfy { $0.changed["todo"] != nil })
    }

    /// An IPv4 address of this machine's that is not loopback, from an interface that is up.
    static let nonLoopbackAddress: String? = {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                current.pointee.ifa_flags & UInt32(IFF_UP) != 0, current.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0
            else { continue }
            var name = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var inet = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &inet, &name, socklen_t(name.count)) != nil else { continue }
            return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }()

    /// Whether nothing listens on 127.0.0.1:8745, the default port.
    static var defaultPortFree: Bool {
        guard let fd = connectLoopback(8745, timeoutSeconds: 1) else { return true }
        close(fd)
        return false
    }

    /// Whether a TCP connection to `host:port` is refused (ECONNREFUSED), as opposed to accepted.
    static func connectionRefused(_ host: String, _ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected != 0 && errno == ECONNREFUSED
    }

    @Test(
        "without --listen it serves 127.0.0.1:8745 only: the machine's other address is refused",
        .enabled(if: nonLoopbackAddress != nil, "this machine has no IPv4 address besides loopback to try"),
        .enabled(if: defaultPortFree, "port 8745 is taken on this machine"))
    func loopbackDefault() throws {
        let address = try #require(Self.nonLoopbackAddress)
        let (cluster, dir) = try devtoolsCluster("loopback")
        let devtools = try DevtoolsProcess(runDir: cluster.runDir, listen: nil)
        defer {
            devtools.stop()
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        #expect(devtools.url.hasPrefix("http://127.0.0.1:8745/#token="), "\(devtools.url)")
        let page = try WebSocketClient(port: 8745)
        #expect(page.receiveJSON(until: ContinuousClock.now + .seconds(30)) { Self.string($0, "kind") == "hello" } != nil)
        #expect(Self.connectionRefused(address, 8745), "a connection to \(address):8745 was not refused")
        #expect(!Self.connectionRefused("127.0.0.1", 8745))
    }

    @Test("stopped the moment it prints its address, it exits cleanly, every time")
    func stoppedAtOnce() throws {
        let (cluster, dir) = try devtoolsCluster("at-once")
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        // The address is the sign it is up: SIGTERM right after it must find the handler in place
        // (`stop()` checks the exit status is 0, not death by the signal).
        for _ in 0..<5 { try DevtoolsProcess(runDir: cluster.runDir).stop() }
    }

    @Test(
        "a [devtools] section sets the address, the token and the connection cap, from --config and from the run directory; the options win over it"
    )
    func configSection() throws {
        let (cluster, dir) = try devtoolsCluster(
            "config",
            extraConfig: """
                [devtools]
                listen = "127.0.0.1:0"
                token_file = "devtools.token"
                max_connections = 1
                """)
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        try "from-the-config\n".write(toFile: dir + "/devtools.token", atomically: true, encoding: .utf8)
        try "from-the-option\n".write(toFile: dir + "/other.token", atomically: true, encoding: .utf8)
        let deadline = ContinuousClock.now + .seconds(30)

        // From --config FILE, and from the cluster.json `cluster up` wrote: the token file, relative to
        // the config, and a cap of one connection.
        for arguments in [["--config", dir + "/cluster.toml"], []] {
            let devtools = try DevtoolsProcess(runDir: cluster.runDir, listen: nil, extraArguments: arguments)
            defer { devtools.stop() }
            #expect(devtools.url.hasPrefix("http://127.0.0.1:") && devtools.url.hasSuffix("/#token=from-the-config"), "\(arguments): \(devtools.url)")
            let page = try WebSocketClient(port: devtools.port, timeoutSeconds: 2)
            #expect(page.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" }?["tokenRequired"] as? Bool == true)
            page.send(#"{"op":"dispatch","id":1,"app":"counter","type":"incrementTapped","arguments":"{}","token":"from-the-config"}"#)
            #expect(Self.string(page.receiveJSON(until: deadline) { ($0["id"] as? Int) == 1 }, "outcome") == "ack", "\(arguments)")
            #expect(throws: (any Error).self, "\(arguments): a second connection past max_connections = 1") {
                try WebSocketClient(port: devtools.port, timeoutSeconds: 2)
            }
        }

        // The options win: another token file and a cap of two.
        let devtools = try DevtoolsProcess(
            runDir: cluster.runDir,
            extraArguments: ["--config", dir + "/cluster.toml", "--token-file", dir + "/other.token", "--max-connections", "2"])
        defer { devtools.stop() }
        #expect(devtools.url.hasSuffix("/#token=from-the-option"), "\(devtools.url)")
        let first = try WebSocketClient(port: devtools.port, timeoutSeconds: 2)
        let second = try WebSocketClient(port: devtools.port, timeoutSeconds: 2)
        #expect(second.receiveJSON(until: deadline) { Self.string($0, "kind") == "hello" } != nil)
        withExtendedLifetime(first) {}
    }
}

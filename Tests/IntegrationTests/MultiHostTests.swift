import FluxTesting
import Foundation
import Spawn
import Testing

/// Hosts made of network namespaces joined by a bridge, created and removed by the test itself.
final class NetworkLab {
    let tag = "zf\(getpid() % 1_000_000)"
    let subnet = "10.231.\(20 + Int(getpid()) % 200)"
    private(set) var hosts: [String] = []
    var bridge: String { "\(tag)br" }

    /// Root, `ip` and permission to make namespaces (containers without CAP_SYS_ADMIN have none).
    static let isAvailable: Bool = {
        guard geteuid() == 0, let ip = which("ip") else { return false }
        let probe = "zfprobe\(getpid())"
        guard (try? runProgram(ip, ["netns", "add", probe]))?.status == 0 else { return false }
        _ = try? runProgram(ip, ["netns", "del", probe])
        return true
    }()

    func ip(_ arguments: [String]) throws {
        let result = try runProgram(which("ip") ?? "/sbin/ip", arguments)
        guard result.status == 0 else { throw TestFailure("ip \(arguments.joined(separator: " ")): \(result.stderr)") }
    }

    func namespace(_ host: String) -> String { "\(tag)\(host)" }
    func address(_ number: Int) -> String { "\(subnet).\(number)" }
    /// The host side of a host's link: setting it down cuts that host off.
    func link(_ host: String) -> String { "\(tag)\(host)" }

    init(hosts names: [String]) throws {
        cleanUp(names)
        try ip(["link", "add", bridge, "type", "bridge"])
        try ip(["addr", "add", "\(address(254))/24", "dev", bridge])
        try ip(["link", "set", bridge, "up"])
        for (index, name) in names.enumerated() {
            let ns = namespace(name)
            try ip(["netns", "add", ns])
            hosts.append(name)
            try ip(["link", "add", link(name), "type", "veth", "peer", "name", "eth0", "netns", ns])
            try ip(["link", "set", link(name), "master", bridge, "up"])
            try ip(["-n", ns, "addr", "add", "\(address(index + 1))/24", "dev", "eth0"])
            try ip(["-n", ns, "link", "set", "eth0", "up"])
            try ip(["-n", ns, "link", "set", "lo", "up"])
        }
    }

    /// Deletes the links first: a namespace may outlive `ip netns del` (the kernel frees it later) and
    /// keep its veth pair, and so the host side, alive meanwhile.
    func cleanUp(_ names: [String]) {
        for name in names { try? ip(["link", "del", link(name)]) }
        for name in names { try? ip(["netns", "del", namespace(name)]) }
        try? ip(["link", "del", bridge])
    }

    deinit { cleanUp(hosts) }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A `zflux` process (or another program) inside a host's namespace, logging to a file; stopped (and
/// waited for) at the end.
final class HostProcess {
    let process: ChildProcess
    let log: String

    init(lab: NetworkLab, host: String, executable: String = zfluxBinary, arguments: [String], log: String) throws {
        self.log = log
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        // `ip netns exec` execs the program itself, so this pid is the node's.
        process = try ChildProcess(
            executable: which("ip") ?? "/sbin/ip", arguments: ["netns", "exec", lab.namespace(host), executable] + arguments,
            output: .appended(to: log))
    }

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    func stop() { process.stop(grace: .seconds(10)) }
}

@Suite("Several hosts (network namespaces)", .serialized)
struct MultiHostTests {
    @Test(
        "dispatcher, two stores and a view on four hosts over tcp with CURVE: a store's link is cut mid-load and restored; it recovers and every node ends exact",
        .enabled(if: NetworkLab.isAvailable, "needs root and `ip netns` (network namespaces); this machine does not allow them"),
        .timeLimit(.minutes(3)))
    func linkCutMidLoad() async throws {
        let lab = try NetworkLab(hosts: ["d", "s1", "s2", "v"])
        defer { lab.cleanUp(lab.hosts) }
        let dir = try directoryWithKeys("multihost-run")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = """
            [cluster]
            transport = "tcp"
            allow_remote = true
            heartbeat_ms = 100
            timeout_ms = 1000

            [dispatcher]
            host = "\(lab.address(1))"
            port = 5570

            [journal]
            fsync = "batch"

            [security]
            server_key = "keys/server.key"
            client_key = "keys/client.key"
            authorized_keys = "keys/authorized_keys"

            [[store]]
            name = "s1"
            app = "counter"
            host = "\(lab.address(2))"
            port = 5580

            [[store]]
            name = "s2"
            app = "counter"
            host = "\(lab.address(3))"
            port = 5580
            effects = false
            """
        let configPath = dir + "/cluster.toml"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let common = ["--config", configPath, "--supervisor-pid", "\(getpid())"]
        var nodes: [HostProcess] = []
        defer { for node in nodes.reversed() { node.stop() } }
        nodes.append(
            try HostProcess(
                lab: lab, host: "d", arguments: ["dispatcher", "--node", "dispatcher", "--run-dir", dir + "/d"] + common, log: dir + "/d.log"))
        nodes.append(
            try HostProcess(lab: lab, host: "s1", arguments: ["store", "--node", "s1", "--run-dir", dir + "/s1"] + common, log: dir + "/s1.log"))
        nodes.append(
            try HostProcess(lab: lab, host: "s2", arguments: ["store", "--node", "s2", "--run-dir", dir + "/s2"] + common, log: dir + "/s2.log"))

        // From this (the "operator's") host, through the bridge, with the cluster's client key.
        let cli = ["--config", configPath, "--run-dir", dir + "/cli"]
        func status(_ endpoint: String) -> [String: Any]? {
            guard let result = try? zflux(["status", "--endpoint", endpoint] + cli, timeout: .seconds(30)), result.status == 0 else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        }
        let dispatcherEndpoint = "tcp://\(lab.address(1)):5570"
        let storeEndpoints = ["s1": "tcp://\(lab.address(2)):5581", "s2": "tcp://\(lab.address(3)):5581"]
        func version(_ store: String) -> Int { status(storeEndpoints[store]!)?["version"] as? Int ?? -1 }
        try await eventually("every node answers across the hosts", timeout: .seconds(60)) {
            status(dispatcherEndpoint) != nil && storeEndpoints.values.allSatisfy { status($0)?["caught_up"] as? Bool == true }
        }
        func diagnostics() -> String {
            ["d", "s1", "s2", "view", "load"].map { name in
                "\(name).log: " + String(((try? String(contentsOfFile: dir + "/\(name).log", encoding: .utf8)) ?? "").suffix(800))
            }.joined(separator: "\n")
        }
        func step(_ what: String, timeout: Duration = .seconds(30), _ condition: () throws -> Bool) async throws {
            do { try await eventually(what, timeout: timeout, condition) } catch {
                Issue.record("\(diagnostics())")
                throw error
            }
        }

        let view = try HostProcess(
            lab: lab, host: "v", arguments: ["view", "s1", "--json", "--config", configPath, "--run-dir", dir + "/v"], log: dir + "/view.log")
        defer { view.stop() }
        try await step("the view on the fourth host shows s1") { view.output.contains(#""store":"s1""#) }

        // Load: 6,000 actions, each acknowledged before the next, from the operator's host.
        let total = 6000
        let load = Process()
        load.executableURL = URL(fileURLWithPath: zfluxBinary)
        load.arguments = ["dispatch", "counter", "addTapped", #"{"amount":1}"#, "--repeat", "\(total)", "--timeout", "30"] + cli
        let loadOutput = Pipe()
        load.standardOutput = loadOutput
        load.standardError = FileHandle(forWritingAtPath: dir + "/load.log") ?? FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: dir + "/load.log", contents: nil)
        try load.run()
        defer { if load.isRunning { kill(load.processIdentifier, SIGKILL) } }

        // Mid-load, cut s1's link; keep it cut while the dispatcher moves on and past s1's timeout.
        try await step("s1 has applied some of the load") { version("s1") >= 500 }
        try lab.ip(["link", "set", lab.link("s1"), "down"])
        let cutAt = ContinuousClock.now
        let headAtCut = status(dispatcherEndpoint)?["head"] as? Int ?? 0
        // A thousand round trips, one after another: on a loaded machine that is well past 30 s, and the
        // deadline only bounds a hang.
        try await step("the dispatcher goes on while s1 is cut off", timeout: .seconds(180)) {
            (status(dispatcherEndpoint)?["head"] as? Int ?? 0) >= headAtCut + 1000
        }
        #expect(status(storeEndpoints["s1"]!) == nil, "s1 is unreachable while its link is down")
        // The fault lasts at least three store timeouts, so s1 notices it (this is the fault's length,
        // not a wait for anything).
        let elapsed = ContinuousClock.now - cutAt
        if elapsed < .seconds(3) { try await Task.sleep(for: .seconds(3) - elapsed) }
        try lab.ip(["link", "set", lab.link("s1"), "up"])

        // The load completes; every store and the view end exactly at its reduction.
        try await step("the load finishes", timeout: .seconds(120)) { !load.isRunning }
        #expect(load.terminationStatus == 0, "\((try? String(contentsOfFile: dir + "/load.log", encoding: .utf8)) ?? "")")
        let lastSeq =
            Int(
                String(decoding: loadOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(lastSeq == total, "the cluster's only actions are the load's, so the last seq is \(total)")
        try await step("s1 and s2 reach the dispatcher's head", timeout: .seconds(60)) {
            version("s1") == total && version("s2") == total
        }
        for store in ["s1", "s2"] {
            let state = try zflux(["state", store] + cli)
            #expect(
                state.stdout.contains(#""version":\#(total)"#) && state.stdout.contains(#""count":\#(total)"#),
                "\(store): \(state.stdout) \(state.stderr)")
        }
        let s1 = try #require(status(storeEndpoints["s1"]!))
        let recovered = (s1["reconnects"] as? Int ?? 0) + (s1["gaps_repaired"] as? Int ?? 0)
        #expect(recovered > 0, "s1 noticed the cut and repaired it (reconnects or gap repair): \(s1)")
        #expect((status(dispatcherEndpoint)?["head"] as? Int) == total, "nothing acknowledged was lost or repeated")
        // The view was cut off with s1 and recovers by asking for a snapshot again: as long as s1 gets
        // to catch up on a loaded two-core host.
        try await step("the view on its own host shows s1 at \(total)", timeout: .seconds(60)) {
            view.output.split(separator: "\n").last.map { $0.contains(#""version":\#(total)"#) && $0.contains(#""count":\#(total)"#) } ?? false
        }
        let journal = try zflux(["journal", "verify", "--run-dir", dir + "/d", "--config", configPath])
        #expect(journal.status == 0, "\(journal.stdout) \(journal.stderr)")
    }
}

import FluxTesting
import Foundation
import Testing

func which(_ program: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(dir)/\(program)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

/// A scratch directory with a server and a client key pair and an authorized-keys file in keys/.
/// A scratch directory with keys/ as `zflux keygen` makes them: the server's and the client's, the
/// authorized keys, and each of `members`' own (a dispatcher pair's).
func directoryWithKeys(_ name: String, members: [String] = []) throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())").path
    try? FileManager.default.removeItem(atPath: dir)
    try FileManager.default.createDirectory(atPath: dir + "/keys", withIntermediateDirectories: true)
    for pair in ["server", "client"] + members {
        let made = try zflux(["keygen", pair, "--dir", dir + "/keys"])
        #expect(made.status == 0, "\(made.stderr)")
    }
    let pub = try String(contentsOfFile: dir + "/keys/client.pub", encoding: .utf8)
    try pub.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
        .write(toFile: dir + "/keys/authorized_keys", atomically: true, encoding: .utf8)
    return dir
}

/// The public key `zflux keygen NAME --dir KEYS` wrote to `KEYS/NAME.pub` (its line that is not a comment).
func keygenPublicKey(_ name: String, in keys: String) throws -> String {
    try String(contentsOfFile: "\(keys)/\(name).pub", encoding: .utf8).split(separator: "\n").first { !$0.hasPrefix("#") }.map(String.init) ?? ""
}

@Suite("Deployment files and multi-host configs")
struct DeployTests {
    @Test("the systemd units pass systemd-analyze verify (with this build's binary in ExecStart)")
    func systemdUnits() throws {
        guard let analyze = which("systemd-analyze") else {
            Issue.record("systemd-analyze is missing: `make test-deps` installs systemd")
            return
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("units-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Every unit: the single dispatcher, a pair's member (zflux-dispatcher@d1) and a store.
        for unit in ["zflux-dispatcher.service", "zflux-dispatcher@.service", "zflux-store@.service"] {
            let text = try String(contentsOfFile: packageRoot + "/deploy/systemd/" + unit, encoding: .utf8)
            #expect(text.contains("ExecStart=/usr/local/bin/zflux "))
            // A pair's member restarts after any exit (a deposed leader exits 75 to come back as the standby).
            #expect(text.contains("User=zflux") && text.contains("StateDirectory=zflux"))
            #expect(text.contains(unit == "zflux-dispatcher@.service" ? "Restart=always" : "Restart=on-failure"), "\(unit)")
            let local = text.replacingOccurrences(of: "/usr/local/bin/zflux", with: zfluxBinary)
            let instance = unit.hasPrefix("zflux-store") ? "todo" : "d1"
            try local.write(
                toFile: dir + "/" + unit.replacingOccurrences(of: "@.service", with: "@\(instance).service"), atomically: true, encoding: .utf8)
        }
        let verified = try runProgram(
            analyze, ["verify", dir + "/zflux-dispatcher.service", dir + "/zflux-dispatcher@d1.service", dir + "/zflux-store@todo.service"])
        #expect(verified.status == 0 && verified.stderr.isEmpty, "\(verified.stderr)")
        // The check bites: a misspelt key is reported.
        let bad = try String(contentsOfFile: dir + "/zflux-dispatcher.service", encoding: .utf8).replacingOccurrences(
            of: "Restart=", with: "Restrat=")
        try bad.write(toFile: dir + "/bad.service", atomically: true, encoding: .utf8)
        #expect(try !runProgram(analyze, ["verify", dir + "/bad.service"]).stderr.isEmpty)
    }

    @Test("the Kubernetes manifests parse, have the expected kinds and probes, and carry a config that passes cluster check")
    func kubernetesManifests() throws {
        let python = which("python3") ?? "/usr/bin/python3"
        let yaml = try String(contentsOfFile: packageRoot + "/deploy/k8s/zflux.yaml", encoding: .utf8)
        let parsed = try runProgram(
            python, ["-c", "import sys, json, yaml; json.dump(list(yaml.safe_load_all(sys.stdin)), sys.stdout)"], input: yaml)
        try #require(parsed.status == 0, "PyYAML is needed (`make test-deps` installs it): \(parsed.stderr)")
        let docs = try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [[String: Any]])
        let kinds = docs.compactMap { $0["kind"] as? String }
        #expect(
            Set(kinds) == ["ConfigMap", "Service", "StatefulSet", "Deployment"],
            "no Secret: `kubectl apply` of the file would replace the keys the operator created")
        func name(_ doc: [String: Any]) -> String { (doc["metadata"] as? [String: Any])?["name"] as? String ?? "" }
        let config = try #require(docs.first { $0["kind"] as? String == "ConfigMap" }.flatMap { ($0["data"] as? [String: String])?["cluster.toml"] })

        // The config in the ConfigMap is valid (keys in place, as the Secret mounts them).
        let dir = try directoryWithKeys("k8s")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try config.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let checked = try zflux(["cluster", "check", dir + "/cluster.toml", "--run-dir", dir + "/run"])
        #expect(checked.status == 0, "\(checked.stderr)")
        let topology = try #require(try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any])
        let dispatcher = try #require(topology["dispatcher"] as? [String: Any])
        let stores = try #require(topology["stores"] as? [[String: Any]])

        // Every workload runs a node of that config, and probes /ready and /live on its metrics port.
        let workloads = docs.filter { ["StatefulSet", "Deployment"].contains($0["kind"] as? String) }
        #expect(workloads.count == 1 + stores.count)
        for workload in workloads {
            let spec = try #require(workload["spec"] as? [String: Any])
            let template = try #require(spec["template"] as? [String: Any])
            let labels = try #require((template["metadata"] as? [String: Any])?["labels"] as? [String: String])
            let container = try #require(((template["spec"] as? [String: Any])?["containers"] as? [[String: Any]])?.first)
            let args = try #require(container["args"] as? [String])
            let node = try #require(args.firstIndex(of: "--node").map { args[$0 + 1] })
            let metricsPort =
                node == "dispatcher" ? dispatcher["metricsPort"] as? Int : stores.first { $0["name"] as? String == node }?["metricsPort"] as? Int
            let port = try #require(metricsPort, "node \(node) of \(name(workload)) has a metrics_port in the config")
            // The kubelet probes the pod's address, so the metrics port listens on every interface there.
            let metricsListen =
                node == "dispatcher"
                ? dispatcher["metricsListen"] as? String : stores.first { $0["name"] as? String == node }?["metricsListen"] as? String
            #expect(metricsListen == "0.0.0.0", "node \(node)")
            let ports = try #require(container["ports"] as? [[String: Any]])
            #expect(ports.contains { $0["name"] as? String == "metrics" && $0["containerPort"] as? Int == port })
            for (probe, path) in [("readinessProbe", "/ready"), ("livenessProbe", "/live")] {
                let get = try #require((container[probe] as? [String: Any])?["httpGet"] as? [String: Any], "\(name(workload)) has a \(probe)")
                #expect(get["path"] as? String == path && get["port"] as? String == "metrics")
            }
            try checkMetricsToken(
                container, pod: (template["spec"] as? [String: Any]) ?? [:], in: packageRoot + "/deploy/k8s/zflux.yaml", workload: name(workload))
            // A Service selects these pods and exposes the metrics port.
            let services = docs.filter { $0["kind"] as? String == "Service" }
            #expect(
                services.contains { service in
                    let selector = (service["spec"] as? [String: Any])?["selector"] as? [String: String] ?? [:]
                    return !selector.isEmpty && selector.allSatisfy { labels[$0.key] == $0.value }
                }, "a Service selects \(name(workload))")
        }
        let dispatcherSet = try #require(docs.first { $0["kind"] as? String == "StatefulSet" })
        #expect(
            ((dispatcherSet["spec"] as? [String: Any])?["volumeClaimTemplates"] as? [Any])?.isEmpty == false, "the journal is on a persistent volume")
    }

    @Test("the multi-host example config is valid once its keys exist, and every node has its own host")
    func multiHostExample() throws {
        let dir = try directoryWithKeys("multihost")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: packageRoot + "/deploy/multi-host.example.toml", toPath: dir + "/cluster.toml")
        let checked = try zflux(["cluster", "check", dir + "/cluster.toml", "--run-dir", dir + "/run"])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(
            checked.stdout.contains("tcp://10.0.0.1:5570") && checked.stdout.contains("tcp://10.0.0.2:5580")
                && checked.stdout.contains("tcp://10.0.0.3:5581"))
        // Metrics are plain HTTP: on loopback unless the config says otherwise.
        let topology = try #require(try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any])
        #expect((topology["dispatcher"] as? [String: Any])?["metricsListen"] as? String == "127.0.0.1")
        #expect((topology["stores"] as? [[String: Any]])?.allSatisfy { $0["metricsListen"] as? String == "127.0.0.1" } == true)
        let container = try String(contentsOfFile: packageRoot + "/deploy/Containerfile", encoding: .utf8)
        #expect(container.contains("libzmq5") && container.contains("USER zflux"))
        // It installs `make dist`'s tarball (scripts/dist-test.sh checks it copies what make dist wrote):
        // no Swift image, no build, and nothing else of the repository's.
        let instructions = container.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(!instructions.contains { $0.lowercased().contains("swift") }, "\(container)")
        let copied = instructions.filter { $0.hasPrefix("COPY ") || $0.hasPrefix("ADD ") }.filter { !$0.contains("--from=") }
        #expect(copied.map { $0.split(separator: " ")[1] } == ["${TARBALL}"], "\(copied)")
    }

    @Test(
        "config errors name their line: unknown keys, remote hosts or listen addresses without allow_remote, allow_remote without CURVE, clashing ports, host on ipc"
    )
    func configErrors() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cfgerr-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cases: [(String, String)] = [
            ("[cluster]\ntransport = \"tcp\"\n\n[[store]]\nname = \"todo\"\nhots = \"10.0.0.2\"\n", ":6: unknown key 'hots' in [[store]]"),
            (
                "[cluster]\ntransport = \"tcp\"\n[[store]]\nname = \"todo\"\nhost = \"10.0.0.2\"\n",
                ":5: store 'todo''s host 10.0.0.2 is not a loopback address"
            ),
            (
                "[cluster]\ntransport = \"tcp\"\n[dispatcher]\nport = 6000\n[[store]]\nname = \"todo\"\nport = 6001\n",
                "two nodes would listen on tcp://127.0.0.1:6001"
            ),
            ("[cluster]\ntransport = \"ipc\"\n[[store]]\nname = \"todo\"\nport = 6001\n", ":5: store 'todo' sets host, port or listen"),
            // Listening beyond loopback is said out loud: allow_remote, and with it CURVE.
            (
                "[cluster]\ntransport = \"tcp\"\n[dispatcher]\nlisten = \"0.0.0.0\"\n[[store]]\nname = \"todo\"\n",
                ":4: the dispatcher's listen address 0.0.0.0 is not a loopback address: set allow_remote = true"
            ),
            (
                "[cluster]\ntransport = \"tcp\"\n[[store]]\nname = \"todo\"\nlisten = \"10.0.0.2\"\n",
                ":5: store 'todo''s listen address 10.0.0.2 is not a loopback address"
            ),
            (
                "[cluster]\ntransport = \"ipc\"\n[dispatcher]\nmetrics_port = 9470\nmetrics_listen = \"0.0.0.0\"\n[[store]]\nname = \"todo\"\n",
                ":5: the dispatcher's metrics_listen 0.0.0.0 is not a loopback address"
            ),
            (
                "[cluster]\ntransport = \"tcp\"\nallow_remote = true\n[[store]]\nname = \"todo\"\n",
                ":3: allow_remote = true needs a [security] section"
            ),
            // A payload limit above what the receive limit lets through would accept actions no replay can carry.
            ("[limits]\nmax_payload_bytes = 16777216\n[[store]]\nname = \"todo\"\n", ":2: max_payload_bytes 16777216 is over 16711680"),
            (
                "[limits]\npayload = { \"todo.addTodo\" = 20000000 }\n[[store]]\nname = \"todo\"\n",
                ":2: the payload limit of todo.addTodo, 20000000, is over 16711680"
            ),
            ("[cluster]\ntransport = \"tcp\"\ntimeout_ms = 50\n[[store]]\nname = \"todo\"\n", ":3: timeout_ms must be"),
            ("[restart]\nmax_restarts = -1\n[[store]]\nname = \"todo\"\n", ":2: max_restarts must be"),
            ("[journal]\nfsync = \"sometimes\"\n[[store]]\nname = \"todo\"\n", ":2: fsync 'sometimes' is not one of: always, batch, none"),
            ("[cluster]\ncodec = \"xml\"\n[[store]]\nname = \"todo\"\n", ":2: codec 'xml' is not one of: binary, json"),
            // The new user's trial: a config of only [journal] was refused with no word on what to add.
            ("[journal]\nsegment_mb = 1\n", "no [[store]] entries: a cluster runs at least one store; add one, such as [[store]] with name"),
        ]
        for (index, (text, expected)) in cases.enumerated() {
            let path = dir + "/c\(index).toml"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try zflux(["cluster", "check", path, "--run-dir", dir + "/run"])
            #expect(result.status != 0)
            #expect(result.stderr.contains(expected), "case \(index): \(result.stderr)")
        }
    }

    @Test("a node's metrics port serves Prometheus text, /ready and /live; status --endpoint asks one node")
    func metricsAndReadiness() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = try freePortRange(count: 4)
        let config = """
            [cluster]
            transport = "ipc"
            [dispatcher]
            metrics_port = \(base)
            [[store]]
            name = "counter"
            metrics_port = \(base + 1)
            """
        try config.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        for _ in 0..<3 {
            let sent = try cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":2}"#])
            #expect(sent.status == 0, "\(sent.stderr)")
        }
        try await eventually("the store reports version 3 in its metrics") {
            guard let (status, body) = httpGet(base + 1, "/metrics") else { return false }
            return status == 200 && body.contains(#"zflux_store_version{node="counter"} 3"#)
        }
        let dispatcherMetrics = httpGet(base, "/metrics")?.1 ?? ""
        #expect(dispatcherMetrics.contains(#"zflux_dispatcher_accepted_total{node="dispatcher"} 3"#), "\(dispatcherMetrics)")
        // Under fsync batch (the default) each of the three dispatches, sent one after the other's ACK,
        // waited for a sync of its own; the dispatcher times them.
        func metric(_ name: String, in text: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(name + "{") }.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
        }
        let syncs = try #require(metric("zflux_dispatcher_journal_syncs_total", in: dispatcherMetrics), "\(dispatcherMetrics)")
        #expect(syncs >= 3, "\(dispatcherMetrics)")
        for gauge in ["p50", "p99", "max"] {
            #expect(metric("zflux_dispatcher_journal_sync_\(gauge)_us", in: dispatcherMetrics) != nil, "\(dispatcherMetrics)")
        }
        // Two more dispatches, two more syncs at least.
        for _ in 0..<2 { #expect(try cluster.zflux(["dispatch", "counter", "addTapped", #"{"amount":1}"#]).status == 0) }
        let after = httpGet(base, "/metrics")?.1 ?? ""
        #expect(try #require(metric("zflux_dispatcher_journal_syncs_total", in: after)) >= syncs + 2, "\(after)")
        #expect(httpGet(base, "/ready")?.0 == 200)
        #expect(httpGet(base + 1, "/ready")?.0 == 200)
        #expect(httpGet(base + 1, "/live")?.0 == 200)
        #expect(httpGet(base + 1, "/nothing")?.0 == 404)
        let topology = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/run/cluster.json"))) as? [String: Any]
        let snapshot = try #require(((topology?["stores"] as? [[String: Any]])?.first)?["snapshot"] as? String)
        let one = try cluster.zflux(["status", "--endpoint", snapshot])
        #expect(one.status == 0 && one.stdout.split(separator: "\n").count == 1 && one.stdout.contains(#""name":"counter""#), "\(one.stdout)")
        // A stopped store fails its probes.
        cluster.stop()
        #expect(httpGet(base + 1, "/live")?.0 != 200)
    }
}

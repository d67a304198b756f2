import FluxTesting
import Foundation
import Testing

/// The deployment files of a dispatcher pair ([ha]): the example config, the systemd unit and etcd's
/// settings, and the Kubernetes manifests.
extension DeployTests {
    /// The documents of a YAML file, as JSON objects (PyYAML reads it).
    func manifests(_ path: String) throws -> [[String: Any]] {
        let python = which("python3") ?? "/usr/bin/python3"
        let yaml = try String(contentsOfFile: path, encoding: .utf8)
        let parsed = try runProgram(
            python, ["-c", "import sys, json, yaml; json.dump(list(yaml.safe_load_all(sys.stdin)), sys.stdout)"], input: yaml)
        try #require(parsed.status == 0, "PyYAML is needed (`make test-deps` installs it): \(parsed.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [[String: Any]])
    }

    /// What the manifests' probes carry in place of the metrics token, and the file's notes replace.
    static let metricsTokenPlaceholder = "METRICS-TOKEN"

    /// A zflux node's container in a manifest (`pod`: its pod spec) guards its metrics port, which listens
    /// on the pod's address, with a token: `ZFLUX_METRICS_TOKEN_FILE` names a file of a mounted Secret, and
    /// every HTTP probe sends `Authorization: Bearer` with the placeholder the file's notes replace.
    func checkMetricsToken(_ container: [String: Any], pod: [String: Any], in file: String, workload: String) throws {
        let env = container["env"] as? [[String: Any]] ?? []
        let path = try #require(
            env.first { $0["name"] as? String == "ZFLUX_METRICS_TOKEN_FILE" }?["value"] as? String,
            "\(workload) sets ZFLUX_METRICS_TOKEN_FILE: its metrics port listens beyond loopback (SECURITY.md)")
        let directory = (path as NSString).deletingLastPathComponent
        let mount = try #require(
            (container["volumeMounts"] as? [[String: Any]] ?? []).first { $0["mountPath"] as? String == directory },
            "\(workload) mounts \(directory)")
        let volume = (pod["volumes"] as? [[String: Any]] ?? []).first { $0["name"] as? String == mount["name"] as? String }
        #expect((volume?["secret"] as? [String: Any])?["secretName"] as? String == "zflux-metrics-token", "\(workload): the token is a Secret's")
        var probes = 0
        for probe in ["readinessProbe", "livenessProbe"] {
            guard let get = (container[probe] as? [String: Any])?["httpGet"] as? [String: Any] else { continue }
            probes += 1
            let headers = get["httpHeaders"] as? [[String: Any]] ?? []
            #expect(
                headers.contains { $0["name"] as? String == "Authorization" && $0["value"] as? String == "Bearer \(Self.metricsTokenPlaceholder)" },
                "\(workload)'s \(probe) sends the token: \(headers)")
        }
        #expect(probes >= 1, "\(workload) has an HTTP probe")
        // The file's notes make the Secret and put the token in place of the placeholder, with the same name.
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("sed \"s|\(Self.metricsTokenPlaceholder)|$(cat metrics.token)|\""), "\(file) says how the probes get the token")
    }

    /// `cluster check` of `config` beside a keys/ directory: its topology as JSON.
    func checkedTopology(_ config: String, in dir: String) throws -> [String: Any] {
        try config.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let checked = try zflux(["cluster", "check", dir + "/cluster.toml", "--run-dir", dir + "/run"])
        try #require(checked.status == 0, "\(checked.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any])
    }

    @Test("the pair's example config passes cluster check: two dispatchers on two hosts, four ports each, etcd's three members")
    func pairExample() throws {
        let dir = try directoryWithKeys("ha-example", members: ["d1", "d2"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = try String(contentsOfFile: packageRoot + "/deploy/ha.example.toml", encoding: .utf8)
        let topology = try checkedTopology(text, in: dir)
        let ha = try #require(topology["ha"] as? [String: Any])
        #expect(ha["etcd"] as? [String] == ["http://10.0.0.5:2379", "http://10.0.0.6:2379", "http://10.0.0.7:2379"])
        #expect(ha["key"] as? String == "/zflux/shop/leader" && ha["replication"] as? String == "sync" && ha["leaseMilliseconds"] as? Int == 3000)
        let members = try #require(ha["dispatchers"] as? [[String: Any]])
        #expect(members.map { $0["name"] as? String } == ["d1", "d2"])
        #expect(members.map { ($0["endpoints"] as? [String: Any])?["intake"] as? String } == ["tcp://10.0.0.1:5570", "tcp://10.0.0.2:5570"])
        #expect(members.map { $0["replication"] as? String } == ["tcp://10.0.0.1:5573", "tcp://10.0.0.2:5573"])
        #expect(members.map { $0["journalDirectory"] as? String } == [dir + "/run/journal/d1", dir + "/run/journal/d2"])
        // Each member's own key: the other's replication port admits it alone.
        #expect(members.map { $0["keyFile"] as? String } == [dir + "/keys/d1.key", dir + "/keys/d2.key"])
        #expect(members.allSatisfy { ($0["publicKey"] as? String)?.count == 40 })
        #expect((topology["dispatcher"] as? [String: Any])?["intake"] as? String == "tcp://10.0.0.1:5570,tcp://10.0.0.2:5570")

        // etcd's notes name the same client URL as the config.
        let etcd = try String(contentsOfFile: packageRoot + "/deploy/systemd/etcd.default.example", encoding: .utf8)
        #expect(etcd.contains("ETCD_ADVERTISE_CLIENT_URLS=\"http://10.0.0.5:2379\"") && etcd.contains("ETCD_INITIAL_CLUSTER="))
    }

    @Test("the pair's systemd unit runs `zflux dispatcher --node %i`, restarts a leader that stepped down, and passes systemd-analyze verify")
    func pairUnit() throws {
        guard let analyze = which("systemd-analyze") else {
            Issue.record("systemd-analyze is missing: `make test-deps` installs systemd")
            return
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pair-units-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = try String(contentsOfFile: packageRoot + "/deploy/systemd/zflux-dispatcher@.service", encoding: .utf8)
        #expect(text.contains("ExecStart=/usr/local/bin/zflux dispatcher --config /etc/zflux/cluster.toml --node %i "))
        #expect(text.contains("User=zflux") && text.contains("StateDirectory=zflux") && text.contains("Restart=always"))
        try text.replacingOccurrences(of: "/usr/local/bin/zflux", with: zfluxBinary)
            .write(toFile: dir + "/zflux-dispatcher@d1.service", atomically: true, encoding: .utf8)
        let verified = try runProgram(analyze, ["verify", dir + "/zflux-dispatcher@d1.service"])
        #expect(verified.status == 0 && verified.stderr.isEmpty, "\(verified.stderr)")
    }

    @Test("the pair's Kubernetes manifests: a 3-member etcd, a StatefulSet with its own volume per dispatcher, a config that passes cluster check")
    func pairManifests() throws {
        let docs = try manifests(packageRoot + "/deploy/k8s/zflux-ha.yaml")
        #expect(
            Set(docs.compactMap { $0["kind"] as? String }) == ["ConfigMap", "Service", "StatefulSet", "Deployment"],
            "no Secret: `kubectl apply` of the file would replace the keys the operator created")
        func name(_ doc: [String: Any]) -> String { (doc["metadata"] as? [String: Any])?["name"] as? String ?? "" }
        func spec(_ doc: [String: Any]) -> [String: Any] { doc["spec"] as? [String: Any] ?? [:] }
        func container(_ doc: [String: Any]) -> [String: Any] {
            (((spec(doc)["template"] as? [String: Any])?["spec"] as? [String: Any])?["containers"] as? [[String: Any]])?.first ?? [:]
        }
        let config = try #require(docs.first { $0["kind"] as? String == "ConfigMap" }.flatMap { ($0["data"] as? [String: String])?["cluster.toml"] })
        let dir = try directoryWithKeys("k8s-ha", members: ["d1", "d2"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let topology = try checkedTopology(config, in: dir)
        let ha = try #require(topology["ha"] as? [String: Any])
        let members = try #require(ha["dispatchers"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        let stores = try #require(topology["stores"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        #expect(members == ["d1", "d2"])

        // etcd: three members, and the config reaches each by its stable name.
        let etcd = try #require(docs.first { $0["kind"] as? String == "StatefulSet" && name($0) == "zflux-etcd" })
        #expect(spec(etcd)["replicas"] as? Int == 3)
        #expect(container(etcd)["command"] as? [String] == ["etcd"])
        #expect(ha["etcd"] as? [String] == (0..<3).map { "http://zflux-etcd-\($0).zflux-etcd:2379" })

        // Every zflux workload runs one node of the config; each dispatcher keeps its journal on a volume of its own.
        let workloads = docs.filter { ["StatefulSet", "Deployment"].contains($0["kind"] as? String) && name($0) != "zflux-etcd" }
        var nodes: [String] = []
        for workload in workloads {
            let args = try #require(container(workload)["args"] as? [String], "\(name(workload)) has args")
            let node = try #require(args.firstIndex(of: "--node").map { args[$0 + 1] })
            nodes.append(node)
            #expect(args.first == (members.contains(node) ? "dispatcher" : "store"), "\(name(workload)): \(args)")
            if members.contains(node) {
                #expect(workload["kind"] as? String == "StatefulSet" && spec(workload)["replicas"] as? Int == 1)
                #expect((spec(workload)["volumeClaimTemplates"] as? [Any])?.isEmpty == false, "\(name(workload))'s journal is on a persistent volume")
                let get = (container(workload)["readinessProbe"] as? [String: Any])?["httpGet"] as? [String: Any]
                #expect(get?["path"] as? String == "/ready")
                // A standby answers no status request: a liveness probe would kill it.
                #expect(container(workload)["livenessProbe"] == nil)
            }
            // A Service selects its pods; a dispatcher's keeps the standby reachable.
            let labels =
                (((spec(workload)["template"] as? [String: Any])?["metadata"] as? [String: Any])?["labels"] as? [String: String]) ?? [:]
            let service = docs.first { doc in
                guard doc["kind"] as? String == "Service" else { return false }
                let selector = spec(doc)["selector"] as? [String: String] ?? [:]
                return !selector.isEmpty && selector.allSatisfy { labels[$0.key] == $0.value }
            }
            try #require(service != nil, "a Service selects \(name(workload))")
            if members.contains(node) { #expect(spec(service ?? [:])["publishNotReadyAddresses"] as? Bool == true) }
            try checkMetricsToken(
                container(workload), pod: ((spec(workload)["template"] as? [String: Any])?["spec"] as? [String: Any]) ?? [:],
                in: packageRoot + "/deploy/k8s/zflux-ha.yaml", workload: name(workload))
        }
        #expect(nodes.sorted() == (members + stores).sorted())
    }
}

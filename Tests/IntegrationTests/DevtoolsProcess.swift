import Foundation
import NodeSupport
import Spawn
import Testing

/// A small cluster (a dispatcher, a todo and a counter store, with a journal) for the devtools' tests.
/// `extraConfig` is appended to its config file (a `[devtools]` section, say).
func devtoolsCluster(_ name: String, extraConfig: String = "") throws -> (ClusterProcess, dir: String) {
    var template = Array("/tmp/zf-dt-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw NodeError("mkdtemp failed") }
    let dir = String(cString: made)
    try """
    [cluster]
    transport = "ipc"
    heartbeat_ms = 200
    [journal]
    fsync = "batch"
    [[store]]
    name = "todo"
    [[store]]
    name = "counter"
    \(extraConfig)
    """.write(toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
    let cluster = try ClusterProcess(transport: "ipc", runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
    try cluster.waitUntilReady()
    return (cluster, dir)
}

/// A real `zflux devtools`, by default on a free loopback port (`listen` nil: no `--listen`, so the
/// config's or the default address); `stop()` ends it and checks it exited cleanly.
final class DevtoolsProcess {
    let process: ChildProcess
    /// The address it printed, with its `#token=…`.
    let url: String
    let port: Int
    let log: String
    /// The token the printed address carries (`#token=…`), which a dispatch, time travel and an export need.
    var token: String { url.components(separatedBy: "#token=").dropFirst().first ?? "" }
    private var stopped = false

    /// `binary`: the zflux binary to run, by default the stock one (a package's own, for its apps).
    init(
        runDir: String, listen: String? = "127.0.0.1:0", extraArguments: [String] = [], environment: [String: String] = [:],
        binary: String = zfluxBinary
    ) throws {
        log = runDir + "/devtools-\(UInt32.random(in: 0...UInt32.max)).log"
        process = try ChildProcess(
            executable: binary, arguments: ["devtools", "--run-dir", runDir] + (listen.map { ["--listen", $0] } ?? []) + extraArguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new }, output: .piped,
            errors: .appended(to: log))
        // The first line of its stdout is the address, printed once it listens.
        var text = ""
        let deadline = ContinuousClock.now + .seconds(30)
        let fd = process.standardOutput?.fileDescriptor ?? -1
        while !text.contains("\n") && ContinuousClock.now < deadline {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(fd, &byte, 1) == 1 else { break }
            text.append(Character(UnicodeScalar(byte)))
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("devtools at http://"),
            let port = line.split(separator: ":").last?.split(separator: "/").first.flatMap({ Int($0) })
        else {
            _ = process.stop(grace: .seconds(5))
            throw NodeError("devtools printed no address (\(text)): \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        url = String(line.dropFirst("devtools at ".count))
        self.port = port
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        if !process.stop(grace: .seconds(10)) { Issue.record("devtools ignored SIGTERM for 10 s") }
        #expect(process.termination == .exited(0), "devtools exit: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    deinit { stop() }
}

/// The devtools' page in a real browser: a small cluster (``devtoolsCluster(_:extraConfig:)``), its
/// `zflux devtools`, and headless Chromium on the page, live. `stop()` ends all three and removes the
/// cluster's directory.
final class DevtoolsPageSession {
    let cluster: ClusterProcess
    let dir: String
    let devtools: DevtoolsProcess
    let browser: HeadlessChromium

    /// `address`: what the browser opens, from the address devtools printed (by default that one).
    init(_ name: String, environment: [String: String] = [:], extraConfig: String = "", address: (String) -> String = { $0 }) throws {
        try #require(FileManager.default.isExecutableFile(atPath: HeadlessChromium.executable), "chromium is missing: make test-deps installs it")
        (cluster, dir) = try devtoolsCluster(name, extraConfig: extraConfig)
        do {
            devtools = try DevtoolsProcess(runDir: cluster.runDir, environment: environment)
            browser = try HeadlessChromium(url: address(devtools.url))
        } catch {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
            throw error
        }
        #expect(try browser.waitUntil("document.getElementById('conn').textContent === 'live'"))
    }

    func stop() {
        browser.stop()
        devtools.stop()
        cluster.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }
}

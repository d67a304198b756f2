import Foundation
import NodeSupport
import Spawn
import Testing

/// Headless Chromium driven over its DevTools protocol (a WebSocket on a loopback port it picks):
/// evaluate script in the page, wait for a condition, take a screenshot.
final class HeadlessChromium {
    static let executable = "/usr/bin/chromium"
    let process: ChildProcess
    let profile: String
    let protocolSocket: WebSocketClient
    private var nextID = 1

    init(url: String) throws {
        var template = Array("/tmp/zf-chromium-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw NodeError("mkdtemp failed") }
        profile = String(cString: made)
        var arguments = [
            "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--user-data-dir=\(profile)", "--remote-debugging-port=0", "--window-size=1400,1000", url,
        ]
        // As root (a container's test run) Chromium starts only without its sandbox.
        if getuid() == 0 { arguments.insert("--no-sandbox", at: 0) }
        process = try ChildProcess(executable: HeadlessChromium.executable, arguments: arguments, output: .discarded)
        // It writes the port it listens on into the profile once it is up.
        let deadline = ContinuousClock.now + .seconds(60)
        var port: Int?
        while port == nil && ContinuousClock.now < deadline && process.isRunning {
            port = (try? String(contentsOfFile: profile + "/DevToolsActivePort", encoding: .utf8))?.split(separator: "\n").first.flatMap { Int($0) }
            if port == nil { usleep(50_000) }
        }
        var target: String?
        while let port, target == nil && ContinuousClock.now < deadline {
            if let (status, body) = httpGet(port, "/json/list"), status == 200,
                let list = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]],
                let page = list.first(where: { $0["type"] as? String == "page" }), let address = page["webSocketDebuggerUrl"] as? String,
                let path = URL(string: address)?.path, !path.isEmpty
            {
                target = path
            } else {
                usleep(50_000)
            }
        }
        guard let port, let target else {
            _ = process.stop(grace: .seconds(5))
            try? FileManager.default.removeItem(atPath: profile)
            throw NodeError("Chromium did not open its DevTools port")
        }
        do {
            protocolSocket = try WebSocketClient(port: port, path: target, timeoutSeconds: 30)
        } catch {
            // No object, so no deinit to stop it: stopped here, or it would outlive the test.
            _ = process.stop(grace: .seconds(5))
            try? FileManager.default.removeItem(atPath: profile)
            throw error
        }
    }

    /// Sends one DevTools command and waits for its answer's `result`.
    func command(_ method: String, _ parameters: [String: Any] = [:]) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        let body = try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": parameters])
        protocolSocket.send(Array(body))
        guard let answer = protocolSocket.receiveJSON(until: ContinuousClock.now + .seconds(30), where: { ($0["id"] as? Int) == id }) else {
            throw NodeError("no answer to \(method)")
        }
        if let error = answer["error"] { throw NodeError("\(method): \(error)") }
        return answer["result"] as? [String: Any] ?? [:]
    }

    /// The value of a script expression in the page, as a string (`String(…)` of it).
    func evaluate(_ expression: String) throws -> String {
        let result = try command("Runtime.evaluate", ["expression": "String(\(expression))", "returnByValue": true])
        return ((result["result"] as? [String: Any])?["value"] as? String) ?? ""
    }

    /// Waits (bounded) until `expression` is true in the page. An evaluation that fails (the page is
    /// loading again) counts as false.
    func waitUntil(_ expression: String, timeout: Duration = .seconds(30)) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? evaluate("!!(\(expression))")) == "true" { return true }
            usleep(50_000)
        }
        return false
    }

    /// Gives the file input matched by `selector` the file at `path`, as a person choosing it would.
    func chooseFile(_ selector: String, path: String) throws {
        let document = try command("DOM.getDocument")
        let root = try #require((document["root"] as? [String: Any])?["nodeId"] as? Int)
        let node = try #require(try command("DOM.querySelector", ["nodeId": root, "selector": selector])["nodeId"] as? Int)
        _ = try command("DOM.setFileInputFiles", ["nodeId": node, "files": [path]])
    }

    func screenshot() throws -> Data {
        let result = try command("Page.captureScreenshot", ["format": "png"])
        guard let data = (result["data"] as? String).flatMap({ Data(base64Encoded: $0) }) else { throw NodeError("no screenshot") }
        return data
    }

    func stop() {
        _ = process.stop(grace: .seconds(5))
        try? FileManager.default.removeItem(atPath: profile)
    }

    deinit { stop() }
}

/// The devtools page in a real browser against a real cluster (docs/OPERATIONS.md, "The devtools page").
@Suite("Devtools page in headless Chromium (real processes)", .serialized, .timeLimit(.minutes(3)))
struct DevtoolsBrowserTests {
    @Test(
        "the page shows the nodes and stores, dispatches through its form, travels back with the slider, exports a session and opens one, follows a bench --attach live, and is screenshot"
    )
    func pageEndToEnd() async throws { try await onThread { try self.pageEndToEndOffThePool() } }

    /// The test, on a thread of its own (``onThread(_:)``): it blocks for a long while, which on the
    /// cooperative pool would hold one of its threads from every async test of the run.
    func pageEndToEndOffThePool() throws {
        let page = try DevtoolsPageSession("browser")
        defer { page.stop() }
        let (cluster, dir, browser) = (page.cluster, page.dir, page.browser)
        // The cluster: a row per node, as `top` shows them; the stores' live states.
        #expect(try browser.waitUntil("document.querySelectorAll('#nodes tr').length === 4"), "header, dispatcher and two stores")
        #expect(try browser.waitUntil("document.querySelector('.store[data-store=todo] details')"))
        // The form offers the apps the cluster's stores run, not every app the binary hosts.
        let offered = try browser.evaluate("[...document.getElementById('dispatch-app').options].map((o) => o.value).join(' ')")
        #expect(offered == "todo counter", "the cluster runs a todo and a counter store: \(offered)")
        #expect(try browser.evaluate("document.getElementById('dispatch-apps').textContent") == "")

        // Dispatch through the form, as a person would: pick the app and action, type the arguments, click.
        _ = try browser.evaluate(
            """
            (() => { const app = document.getElementById('dispatch-app'); app.value = 'todo'; app.dispatchEvent(new Event('change'));
            const type = document.getElementById('dispatch-type'); type.value = 'addTodo'; type.dispatchEvent(new Event('change'));
            document.getElementById('dispatch-args').value = '{"title":"typed in the browser"}';
            document.getElementById('dispatch-send').click(); })()
            """)
        #expect(try browser.waitUntil("document.getElementById('dispatch-result').textContent.startsWith('ACK: seq ')"))
        let seq = try #require(Int(try browser.evaluate("document.getElementById('dispatch-result').textContent.slice(9)")))
        // The live tree shows the new item, highlighted as changed.
        #expect(try browser.waitUntil("document.querySelector('.store[data-store=todo]').textContent.includes('typed in the browser')"))
        #expect(try browser.evaluate("document.querySelectorAll('#stores .store[data-store=todo] .changed').length") != "0")
        // The action stream lists it, and the filter keeps it or hides it.
        #expect(try browser.waitUntil("document.getElementById('stream').textContent.includes('todo.addTodo')"))
        _ = try browser.evaluate(
            "(() => { const f = document.getElementById('filter-type'); f.value = 'increment'; f.dispatchEvent(new Event('input')); })()")
        #expect(try browser.evaluate("document.getElementById('stream').textContent.includes('todo.addTodo')") == "false")
        _ = try browser.evaluate(
            "(() => { const f = document.getElementById('filter-type'); f.value = ''; f.dispatchEvent(new Event('input')); })()")

        // The slider, moved to the seq before: the older state, without the item; then to the seq: with it, and the diff.
        #expect(try browser.waitUntil("Number(document.getElementById('slider').max) >= \(seq)"))
        func slide(to target: Int) throws {
            _ = try browser.evaluate(
                "(() => { const s = document.getElementById('slider'); s.value = '\(target)'; s.dispatchEvent(new Event('input')); })()")
        }
        try slide(to: seq - 1)
        #expect(try browser.waitUntil("document.querySelector('#travel .store[data-store=todo][data-seq=\"\(seq - 1)\"]')"))
        #expect(try browser.evaluate("document.getElementById('travel').textContent.includes('typed in the browser')") == "false")
        try slide(to: seq)
        #expect(try browser.waitUntil("document.querySelector('#travel .store[data-store=todo][data-seq=\"\(seq)\"]')"))
        #expect(try browser.evaluate("document.querySelector('#travel .diff').textContent.includes('typed in the browser')") == "true")

        // The screenshot shows every panel: each is on screen, with a size, when it is taken.
        let panels = ["nodes", "dispatch-form", "stores", "stream", "slider", "travel"]
        for panel in panels {
            let visible = try browser.evaluate(
                "(() => { const r = document.getElementById('\(panel)').getBoundingClientRect(); return r.width > 0 && r.height > 0 && r.top < innerHeight && r.left < innerWidth; })()"
            )
            #expect(visible == "true", "\(panel) is not on screen")
        }
        // A session file: exported from the page, its actions listed and stepped through; then one
        // `journal export` wrote, opened from disk.
        _ = try browser.evaluate(
            "(() => { document.getElementById('session-from').value = '1'; document.getElementById('session-to').value = '\(seq)'; document.getElementById('session-export').click(); })()"
        )
        #expect(try browser.waitUntil("document.getElementById('session-result').className === 'good'"))
        #expect(try browser.evaluate("document.getElementById('session-download').download") == "zflux-1-\(seq).session")
        #expect(try browser.evaluate("document.querySelectorAll('#session-actions li').length") == "\(seq + 1)", "the start, and each action")
        _ = try browser.evaluate("document.querySelector('#session-actions li[data-seq=\"\(seq)\"]').click()")
        #expect(try browser.waitUntil("document.getElementById('session-view').textContent.includes('after seq \(seq)')"))
        #expect(try browser.evaluate("document.querySelector('#session-view .diff').textContent.includes('typed in the browser')") == "true")
        // A stretch beyond the journal: refused, and said so, with no file offered (the cap of 10,000
        // actions is DevtoolsExportRangeTests').
        _ = try browser.evaluate(
            "(() => { document.getElementById('session-from').value = '20000'; document.getElementById('session-to').value = '20001'; document.getElementById('session-export').click(); })()"
        )
        #expect(try browser.waitUntil("document.getElementById('session-result').className === 'bad'"))
        #expect(try browser.evaluate("document.getElementById('session-result').textContent.includes('beyond the journal')") == "true")
        #expect(try browser.evaluate("document.getElementById('session-download').hidden") == "true")
        let file = dir + "/recorded.session"
        let exported = try cluster.zflux(["journal", "export", "--from", "1", "--to", "\(seq)", "--output", file])
        try #require(exported.status == 0, "\(exported.stderr)")
        // What the page offers to save is the file `journal export` writes, byte for byte: its 64-bit
        // client ids and times were once rounded by the page's JavaScript numbers.
        let recorded = try String(contentsOfFile: file, encoding: .utf8)
        let saved = try browser.evaluate("exportedBody")
        #expect(
            saved.trimmingCharacters(in: .newlines) == recorded.trimmingCharacters(in: .newlines),
            "the page's file differs from journal export's: \(saved.prefix(300)) … against \(recorded.prefix(300))")
        try browser.chooseFile("#session-file", path: file)
        #expect(try browser.waitUntil("document.getElementById('session-summary').textContent.startsWith('recorded.session: seqs 1…\(seq)')"))
        // Opened at its start: the states before the first action, without the item.
        #expect(try browser.evaluate("document.getElementById('session-view').textContent.includes('typed in the browser')") == "false")
        _ = try browser.evaluate("document.querySelector('#session-actions li[data-seq=\"\(seq)\"]').click()")
        #expect(try browser.waitUntil("document.getElementById('session-view').textContent.includes('typed in the browser')"))

        // The latency panel follows a `bench --attach` run live: its seconds of ACK latency while it runs
        // (long enough, at a low rate, to be caught running), then its report, drawn as an opened file is.
        let report = dir + "/bench.json"
        let bench = try ChildProcess(
            executable: zfluxBinary,
            arguments: [
                "bench", "--attach", "--app", "counter", "--action", "incrementTapped", "--rate", "50", "--duration", "12", "--warm-up", "1",
                "--json", "--run-dir", cluster.runDir,
            ], output: .appended(to: report), errors: .appended(to: dir + "/bench.log"))
        defer { _ = bench.stop(grace: .seconds(5)) }
        let livePoints =
            "(document.querySelector('#bench-live polyline[data-series=p99]')?.getAttribute('points') || '').split(' ').filter(Boolean).length"
        let caught = try browser.waitUntil("\(livePoints) >= 2", timeout: .seconds(60))
        let status = try browser.evaluate("document.getElementById('bench-live-status').textContent")
        #expect(caught, "no live seconds: \(status)")
        #expect(bench.isRunning, "the live points came while the bench ran")
        #expect(try browser.evaluate("document.getElementById('bench-live-status').textContent.startsWith('bench running: ')") == "true")
        #expect(try browser.evaluate("document.querySelectorAll('#bench-live polyline[data-series=rate]').length") == "1", "the ACK rate too")
        // A page that joins mid-run gets the run's seconds so far, the first one included.
        let firstSecond = try browser.evaluate("Math.min(...benchLive.seconds.keys())")
        // The old page is marked, so the wait below cannot be answered by it before it goes.
        _ = try browser.evaluate("(() => { window.beforeReload = true; location.reload(); })()")
        #expect(
            try browser.waitUntil("!window.beforeReload && document.getElementById('conn').textContent === 'live' && benchLive.seconds.size >= 2"))
        #expect(try browser.evaluate("Math.min(...benchLive.seconds.keys())") == firstSecond, "the seconds before the page joined")
        // Its end: the report's plots, and the status says so.
        #expect(bench.waitForExit(timeout: .seconds(120)), "the bench did not end")
        #expect(bench.termination == .exited(0), "\((try? String(contentsOfFile: dir + "/bench.log", encoding: .utf8)) ?? "")")
        #expect(try browser.waitUntil("document.getElementById('bench-summary').textContent.startsWith('bench --attach: attached')"))
        // The feed's last line holds the report --json printed.
        let feed = try String(contentsOfFile: cluster.runDir + "/bench-live.jsonl", encoding: .utf8)
        let lastLine = try #require(feed.split(separator: "\n").last.map { Data($0.utf8) })
        let last = try #require(try JSONSerialization.jsonObject(with: lastLine) as? NSDictionary)
        let printed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? NSDictionary)
        #expect(last["kind"] as? String == "report" && (last["report"] as? NSDictionary) == printed)
        #expect(try browser.evaluate("document.getElementById('bench-live-status').textContent.startsWith('bench finished')") == "true")
        #expect(try browser.evaluate("document.querySelectorAll('#bench-percentiles polyline[data-series=p50]').length") == "1")
        #expect(try browser.evaluate("document.querySelectorAll('#bench-timeline polyline').length") == "2", "p50 and p99 by second")
        // The same report, opened from the file `--json` wrote.
        _ = try browser.evaluate("document.getElementById('bench-percentiles').replaceChildren()")
        try browser.chooseFile("#bench-file", path: report)
        #expect(try browser.waitUntil("document.getElementById('bench-summary').textContent.startsWith('bench.json: attached')"))
        #expect(try browser.evaluate("document.getElementById('bench-summary').textContent.includes(', 0 lost;')") == "true")
        #expect(try browser.evaluate("document.querySelectorAll('#bench-percentiles polyline[data-series=p50]').length") == "1")
        let points = try browser.evaluate("document.querySelector('#bench-percentiles polyline').getAttribute('points').split(' ').length")
        #expect((Int(points) ?? 0) > 5, "the distribution has its points: \(points)")
        #expect(try browser.evaluate("document.querySelectorAll('#bench-timeline polyline').length") == "2", "p50 and p99 by second")
        // The histogram: a bar per bucket, and together they count every e2e latency the report counted.
        let e2eCount = ((printed["e2e"] as? NSDictionary)?["count"] as? Int) ?? -1
        let barred = try browser.evaluate(
            "[...document.querySelectorAll('#bench-histogram rect.bar')].reduce((sum, bar) => sum + Number(bar.dataset.count), 0)")
        #expect(e2eCount > 0 && barred == String(e2eCount), "bars count \(barred), the report \(e2eCount)")
        _ = try browser.evaluate("document.getElementById('session-section').scrollIntoView()")
        let lower = try browser.screenshot()
        try? lower.write(to: URL(fileURLWithPath: zfluxBinary).deletingLastPathComponent().appendingPathComponent("devtools-screenshot-lower.png"))
        _ = try browser.evaluate("window.scrollTo(0, 0)")

        let png = try browser.screenshot()
        #expect(png.starts(with: [0x89, 0x50, 0x4e, 0x47]) && png.count > 10_000, "not a screenshot: \(png.count) bytes")
        // Kept beside the build for a person to look at (docs/images/devtools.png is one such).
        let kept = URL(fileURLWithPath: zfluxBinary).deletingLastPathComponent().appendingPathComponent("devtools-screenshot.png")
        try? png.write(to: kept)

        // A cluster that runs none of the apps this binary hosts: the form says so (a hello as such a
        // cluster's devtools would send it).
        _ = try browser.evaluate(
            "greet({program: 'zflux', runDirectory: '/elsewhere', tokenRequired: false, stores: [{name: 'other', app: 'unhostedApp'}], apps: hello.apps})"
        )
        #expect(try browser.evaluate("[...document.getElementById('dispatch-app').options].map((o) => o.value).join(' ')") == "unhostedApp")
        #expect(
            try browser.evaluate("document.getElementById('dispatch-apps').textContent").hasPrefix("this cluster runs none of the apps zflux hosts (")
        )
    }
}

import Foundation
import NodeSupport
import Spawn
import Testing

extension DevtoolsBrowserTests {
    /// What a new user of the page ran into: seqs the slider cannot hit, a click in the stream with no
    /// sign of where it went, results of a run or a file before left standing beside a new one's, and a
    /// Nodes table cut off at 1400 px.
    @Test(
        "go to seq travels exactly, a click in the stream marks its line and shows the result, a new bench run or a failed export or open leaves nothing stale, and the nodes table fits"
    )
    func navigationAndStaleResults() throws {
        try #require(FileManager.default.isExecutableFile(atPath: HeadlessChromium.executable), "chromium is missing: make test-deps installs it")
        let (cluster, dir) = try devtoolsCluster("navigation")
        let devtools = try DevtoolsProcess(runDir: cluster.runDir)
        let browser = try HeadlessChromium(url: devtools.url)
        defer {
            browser.stop()
            devtools.stop()
            cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        #expect(try browser.waitUntil("document.getElementById('conn').textContent === 'live'"))
        #expect(try browser.waitUntil("document.querySelectorAll('#nodes tr').length === 4"), "header, dispatcher and two stores")

        // A short bench --attach run: its report drawn, and a journal of some seqs to travel through.
        let report = dir + "/bench.json"
        func attachBench(duration: Int, json: String) throws -> ChildProcess {
            try ChildProcess(
                executable: zfluxBinary,
                arguments: [
                    "bench", "--attach", "--app", "counter", "--action", "incrementTapped", "--rate", "50", "--duration", "\(duration)",
                    "--warm-up", "1", "--json", "--run-dir", cluster.runDir,
                ], output: .appended(to: json), errors: .appended(to: dir + "/bench.log"))
        }
        let finished = try attachBench(duration: 2, json: report)
        defer { _ = finished.stop(grace: .seconds(5)) }
        #expect(finished.waitForExit(timeout: .seconds(120)), "the bench did not end")
        #expect(try browser.waitUntil("document.getElementById('bench-summary').textContent.startsWith('bench --attach: attached')"))
        #expect(try browser.evaluate("document.querySelectorAll('#bench-percentiles polyline').length") == "1")
        #expect(try browser.waitUntil("Number(document.getElementById('slider').max) >= 20"))

        // At 1400 px, every column of the Nodes table is in sight, and time travel spans the page.
        #expect(try browser.evaluate("document.getElementById('cluster').scrollWidth <= document.getElementById('cluster').clientWidth") == "true")
        #expect(try browser.evaluate("document.getElementById('nodes').textContent.includes('STATE')") == "true")
        #expect(
            try browser.evaluate(
                "document.getElementById('travel-section').getBoundingClientRect().width > 0.9 * document.querySelector('main').clientWidth")
                == "true")
    }
}

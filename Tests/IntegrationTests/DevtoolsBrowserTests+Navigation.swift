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
    func navigationAndStaleResults() async throws { try await onThread { try self.navigationAndStaleResultsOffThePool() } }

    /// The test, on a thread of its own (``onThread(_:)``): it blocks for a long while, which on the
    /// cooperative pool would hold one of its threads from every async test of the run.
    func navigationAndStaleResultsOffThePool() throws {
        let page = try DevtoolsPageSession("navigation")
        defer { page.stop() }
        let (cluster, dir, browser) = (page.cluster, page.dir, page.browser)
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

        // "go to seq": exactly the seq typed, with Enter (a form's submit) or the button.
        let head = try browser.evaluate("document.getElementById('slider').max")
        let travelledTo = "document.querySelector('#travel .store[data-store=counter]')?.dataset.seq"
        _ = try browser.evaluate(
            "(() => { document.getElementById('travel-goto-seq').value = '7'; document.getElementById('travel-goto').requestSubmit(); })()")
        #expect(try browser.waitUntil("\(travelledTo) === '7'"))
        #expect(try browser.evaluate("document.getElementById('slider').value") == "7")
        #expect(try browser.evaluate("document.getElementById('travel-goto-result').textContent") == "")
        // Past the head: the head, and a message saying so.
        _ = try browser.evaluate(
            "(() => { document.getElementById('travel-goto-seq').value = '999999'; document.getElementById('travel-goto-send').click(); })()")
        #expect(try browser.waitUntil("\(travelledTo) === '\(head)'"))
        #expect(
            try browser.evaluate("document.getElementById('travel-goto-result').textContent.startsWith('seq 999999 is outside the journal')")
                == "true")
        // The stream's filter says what it searches, and where older seqs are.
        #expect(try browser.evaluate("document.getElementById('stream-count').textContent.includes('newest actions')") == "true")
        #expect(try browser.evaluate("document.getElementById('stream-scope').textContent.includes('go to seq')") == "true")

        // A click in the stream, with the page scrolled down past the panel: its line is marked (and stays
        // so when the stream is drawn again), and the panel is scrolled into sight with that seq.
        _ = try browser.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        #expect(try browser.evaluate("document.getElementById('travel-section').getBoundingClientRect().bottom < 0") == "true")
        let clicked = try browser.evaluate("document.querySelector('#stream li:nth-child(5)').dataset.seq")
        _ = try browser.evaluate("document.querySelector('#stream li:nth-child(5)').click()")
        #expect(try browser.waitUntil("\(travelledTo) === '\(clicked)'"))
        let inSight =
            "(() => { const r = document.getElementById('travel-section').getBoundingClientRect(); return r.top > -1 && r.bottom < innerHeight + 1; })()"
        let revealed = try browser.waitUntil(inSight)
        let place = try browser.evaluate("JSON.stringify([document.getElementById('travel-section').getBoundingClientRect(), innerHeight])")
        #expect(revealed, "the panel is not in sight: \(place)")
        // Kept beside the build, as the other screenshots are: time travel across the page.
        let travelShot = try browser.screenshot()
        try? travelShot.write(
            to: URL(fileURLWithPath: zfluxBinary).deletingLastPathComponent().appendingPathComponent("devtools-screenshot-travel.png"))
        #expect(try browser.evaluate("document.getElementById('travel-goto-result').textContent") == "", "the note of the go to before is gone")
        _ = try browser.evaluate("document.getElementById('filter-type').dispatchEvent(new Event('input'))")
        #expect(try browser.evaluate("[...document.querySelectorAll('#stream li.chosen')].map((li) => li.dataset.seq).join(' ')") == clicked)

        // A new bench run empties the last run's report; one stopped by Ctrl-C says it left none.
        let stopped = try attachBench(duration: 60, json: dir + "/stopped.json")
        defer { _ = stopped.stop(grace: .seconds(5)) }
        #expect(try browser.waitUntil("document.getElementById('bench-live-status').textContent.startsWith('bench running')", timeout: .seconds(60)))
        #expect(try browser.evaluate("document.getElementById('bench-summary').textContent.startsWith('no report for this run yet')") == "true")
        let drawn = "document.querySelectorAll('#bench-percentiles *, #bench-histogram *, #bench-timeline *').length"
        #expect(try browser.evaluate(drawn) == "0", "the report before is not drawn under the new run")
        kill(stopped.pid, SIGINT)
        #expect(stopped.waitForExit(timeout: .seconds(30)), "the bench did not stop")
        #expect(try browser.waitUntil("document.getElementById('bench-live-status').textContent.startsWith('bench stopped')"))
        #expect(try browser.evaluate("document.getElementById('bench-summary').textContent.startsWith('no report for this run: ')") == "true")
        #expect(try browser.evaluate(drawn) == "0")
        let bad = dir + "/bad.session"
        try "not a session".write(toFile: bad, atomically: true, encoding: .utf8)
        // A file that is not a bench report: no plots of the report opened before are left beside its error.
        try browser.chooseFile("#bench-file", path: report)
        #expect(try browser.waitUntil("document.getElementById('bench-summary').textContent.startsWith('bench.json: attached')"))
        #expect(try browser.evaluate(drawn) != "0")
        try browser.chooseFile("#bench-file", path: bad)
        #expect(try browser.waitUntil("document.getElementById('bench-summary').textContent.startsWith('bad.session: not JSON')"))
        #expect(try browser.evaluate(drawn) == "0")

        // Session files: a failed export after a good one leaves no link to the good one's file; a file
        // that is not a session after a good one leaves no list of the good one's actions.
        _ = try browser.evaluate(
            "(() => { document.getElementById('session-from').value = '1'; document.getElementById('session-to').value = '5'; document.getElementById('session-export').click(); })()"
        )
        #expect(try browser.waitUntil("document.getElementById('session-result').className === 'good'"))
        #expect(try browser.evaluate("document.getElementById('session-download').hidden") == "false")
        #expect(try browser.evaluate("document.querySelectorAll('#session-actions li').length") == "6", "the start, and each action")
        _ = try browser.evaluate(
            "(() => { document.getElementById('session-from').value = '20000'; document.getElementById('session-to').value = '20001'; document.getElementById('session-export').click(); })()"
        )
        #expect(try browser.waitUntil("document.getElementById('session-result').className === 'bad'"))
        #expect(try browser.evaluate("document.getElementById('session-download').hidden") == "true")
        try browser.chooseFile("#session-file", path: bad)
        #expect(try browser.waitUntil("document.getElementById('session-summary').textContent.startsWith('bad.session: not JSON')"))
        #expect(try browser.evaluate("document.querySelectorAll('#session-actions li, #session-view *').length") == "0")
    }
}

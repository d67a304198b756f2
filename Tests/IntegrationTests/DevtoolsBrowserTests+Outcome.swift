import Foundation
import NodeSupport
import Testing

extension DevtoolsBrowserTests {
    /// What a user of the page ran into (issue 58): an ACK shown for an action the store then refused or
    /// skipped, a count that claimed to start when the page opened, a store's version left behind by a
    /// refusal, `zflux bench` named inside a team's binary, a histogram label cut off, and no way for a
    /// script to know the page was drawn.
    @Test(
        "the page marks itself ready once its welcome is drawn, says which actions came before it opened, tells after the ACK whether the action was applied, refused or quarantined, keeps a store's version current after a refusal, names its own binary and keeps the histogram's labels in the box"
    )
    func outcomeAndReadiness() async throws { try await onThread { try self.outcomeAndReadinessOffThePool() } }

    func outcomeAndReadinessOffThePool() throws {
        let page = try DevtoolsPageSession(
            "outcome", extraConfig: "[[store]]\nname = \"drill\"\n[restart]\nmax_restarts = 10\nwindow_s = 60\n")
        defer { page.stop() }
        let (cluster, browser) = (page.cluster, page.browser)
        for _ in 0..<3 { try #require(try cluster.zflux(["dispatch", "counter", "incrementTapped"]).status == 0) }
        #expect(try browser.waitUntil("document.querySelectorAll('#stream li').length === 3"), "the devtools got the three actions")
        // A page opened now (reloaded): once it says it is ready, the welcome is drawn, the actions from
        // before it opened among it, and said to be so.
        _ = try browser.evaluate("(() => { window.beforeReload = true; location.reload(); })()")
        #expect(try browser.waitUntil("!window.beforeReload && document.body.dataset.ready === '1'"))
        #expect(try browser.evaluate("document.querySelectorAll('#stream li').length") == "3", "the welcome's actions are drawn when ready")
        #expect(
            try browser.evaluate("[...document.querySelectorAll('#stores .store')].filter((s) => !s.textContent.includes('no state yet')).length")
                == "3",
            "every store's state is drawn when ready")
        let count = try browser.evaluate("document.getElementById('stream-count').textContent")
        #expect(count == "3 of the 3 newest actions (seq 1 on, 3 of them from before this page opened)", "\(count)")
        #expect(!count.contains("since this page opened"))

        func dispatch(_ app: String, _ type: String, _ arguments: String) throws -> Int {
            _ = try browser.evaluate(
                """
                (() => { const app = document.getElementById('dispatch-app'); app.value = '\(app)'; app.dispatchEvent(new Event('change'));
                const type = document.getElementById('dispatch-type'); type.value = '\(type)'; type.dispatchEvent(new Event('change'));
                document.getElementById('dispatch-args').value = '\(arguments)';
                document.getElementById('dispatch-result').textContent = '';
                document.getElementById('dispatch-send').click(); })()
                """)
            #expect(try browser.waitUntil("document.getElementById('dispatch-result').textContent.startsWith('ACK: seq ')"))
            return try #require(Int(try browser.evaluate("document.getElementById('dispatch-result').textContent.slice(9)")))
        }
        let outcome = "document.getElementById('dispatch-outcome').textContent"
        // Applied: every store of its app is current through it.
        let applied = try dispatch("counter", "incrementTapped", "{}")
        #expect(
            try browser.waitUntil("\(outcome) === 'applied: every store of counter is current through seq \(applied)'"),
            "\((try? browser.evaluate(outcome)) ?? "")")
        // Refused by the reducer: said, and the store's version is current through it all the same.
        let refused = try dispatch("todo", "removeTodo", #"{"index":9}"#)
        #expect(
            try browser.waitUntil("\(outcome).startsWith('seq \(refused) was refused by store todo: ')"), "\((try? browser.evaluate(outcome)) ?? "")")
        #expect(
            try browser.waitUntil("Number(document.querySelector('.store[data-store=todo]').dataset.version) >= \(refused)", timeout: .seconds(10)),
            "the todo store's header: \((try? browser.evaluate("document.querySelector('.store[data-store=todo] h3').textContent")) ?? "")")
        // Quarantined: it crashed the drill store twice, and no store applies it.
        let poison = try dispatch("drill", "crash", #"{"note":"from the page"}"#)
        #expect(
            try browser.waitUntil("\(outcome).startsWith('seq \(poison) was not applied: it crashed the reducer of ')", timeout: .seconds(90)),
            "\((try? browser.evaluate(outcome)) ?? "")")
        #expect(try browser.evaluate(outcome).contains("quarantine release \(poison)"))

        // A histogram whose buckets reach the right edge: every label inside the 480-wide box.
        _ = try browser.evaluate(
            """
            showBench({setup: {transport: 'ipc'}, rate_target: 100, rate_achieved: 100, acked: 30, lost: 0,
              e2e: {p50_us: 100, p90_us: 900, p99_us: 9000, p999_us: 9500, p9999_us: 9900, max_us: 9990},
              e2e_histogram: [{from_us: 50, to_us: 100, count: 10}, {from_us: 1000, to_us: 2000, count: 10}, {from_us: 9000, to_us: 10000, count: 10}]},
              'synthetic.json')
            """)
        let outside = try browser.evaluate(
            "[...document.querySelectorAll('#bench-histogram text, #bench-percentiles text')].filter((t) => { const b = t.getBBox(); return b.x < 0 || b.x + b.width > 480; }).map((t) => t.textContent).join(' | ')"
        )
        #expect(outside == "", "labels cut off at the box's edge: \(outside)")
        // In a team's binary, the latency panel names that binary's bench.
        _ = try browser.evaluate("greet(Object.assign({}, hello, {program: 'poll'}))")
        let latency = try browser.evaluate("document.getElementById('bench-section').textContent")
        #expect(latency.contains("poll bench --json") && latency.contains("poll bench --attach") && !latency.contains("zflux bench"), "\(latency)")
    }
}

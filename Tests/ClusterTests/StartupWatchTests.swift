import Cluster
import FluxCore
import Testing

@Suite("cluster up waits for stores that catch up")
struct StartupWatchTests {
    func store(version: UInt64, head: UInt64, ready: Bool = false) -> NodeStatus {
        var status = NodeStatus(role: .store, pid: 1, uptimeMs: 0, subscribers: 0, rejected: 0)
        status.version = version
        status.dispatcherHead = head
        status.subscribed = true
        status.caughtUp = ready
        return status
    }

    @Test("a store replaying for a minute is waited for, with progress lines; then it is ready")
    func slowCatchUp() {
        var watch = StartupWatch()
        var lines: [String] = []
        for second: UInt64 in 0..<60 {
            switch watch.observe("store big", status: store(version: second * 1000, head: 60_000), now: second * 1000) {
            case .stuck(let why): Issue.record("gave up: \(why)")
            case .waiting(let progress): if let progress { lines.append(progress) }
            case .ready: Issue.record("ready too early")
            }
        }
        #expect(lines.count >= 20 && lines.count <= 31, "\(lines.count) lines")
        #expect(lines.last == "store big catching up: version 58000 of 60000")
        #expect(watch.observe("store big", status: store(version: 60_000, head: 60_000, ready: true), now: 61_000) == .ready)
    }

    @Test("a store of a fresh cluster is starting, not catching up with version 0 of 0")
    func freshStore() {
        var watch = StartupWatch()
        #expect(
            watch.observe("store s", status: store(version: 0, head: 0), now: 3000)
                == .waiting(progress: "store s starting: waiting for the dispatcher's first heartbeat"))
    }

    @Test("a store whose version stops moving, or a node that does not answer, fails the start with a reason")
    func stuck() {
        var watch = StartupWatch()
        var verdict = StartupWatch.Verdict.ready
        for second: UInt64 in 0...16 { verdict = watch.observe("store s", status: store(version: 7, head: 900), now: second * 1000) }
        #expect(verdict == .stuck("store s stopped catching up at version 7 of 900 for 16 s"))
        var silent = StartupWatch()
        #expect(silent.observe("dispatcher", status: nil, now: 0) == .waiting(progress: nil))
        #expect(silent.observe("dispatcher", status: nil, now: 15_500) == .stuck("dispatcher did not answer for 15 s"))
    }
}

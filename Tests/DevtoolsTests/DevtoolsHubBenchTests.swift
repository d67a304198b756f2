import Testing

@testable import DevtoolsServer

/// What the hub keeps of a running `bench --attach` for a page that joins: the current run's lines,
/// bounded, its first line kept.
@Suite("Devtools hub: the bench feed")
struct DevtoolsHubBenchTests {
    @Test("a new run replaces what was kept; past the cap the oldest lines go but the run's first")
    func keepsTheCurrentRun() {
        let hub = DevtoolsHub()
        hub.bench([#"{"kind":"start","pid":1}"#, #"{"kind":"second","second":0}"#], newRun: true)
        hub.bench([#"{"kind":"second","second":1}"#], newRun: false)
        #expect(hub.benchLines.count == 3)
        hub.bench([#"{"kind":"start","pid":2}"#], newRun: true)
        #expect(hub.benchLines == [#"{"kind":"start","pid":2}"#], "the run before is gone")

        let seconds = (0..<(DevtoolsHub.benchLinesKept + 100)).map { #"{"kind":"second","second":\#($0)}"# }
        hub.bench(seconds, newRun: false)
        let kept = hub.benchLines
        #expect(kept.count == DevtoolsHub.benchLinesKept)
        #expect(kept.first == #"{"kind":"start","pid":2}"#)
        #expect(kept.last == seconds.last)
        #expect(kept[1] == seconds[101], "the oldest seconds went")
    }

    @Test("the message a page gets says whether it starts over")
    func message() {
        #expect(DevtoolsHub.benchMessage([#"{"a":1}"#, #"{"b":2}"#], reset: true) == #"{"kind":"bench","reset":true,"lines":[{"a":1},{"b":2}]}"#)
    }
}

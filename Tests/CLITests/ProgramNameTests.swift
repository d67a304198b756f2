import Testing

@testable import ZFluxCLI

/// A team's own binary (`poll`, made with `zflux new`) runs the whole command line: what it prints
/// names it, not zflux.
@Suite("A team's own binary's name")
struct ProgramNameTests {
    @Test("bench --svg names the plot's latency lines after the binary that measured them; the floor's line is the floor's")
    func benchPlotSeries() {
        let series = BenchCommand.Run.plotSeries(program: "poll", e2e: .init(), ack: .init(), floor: .init())
        #expect(series.map(\.name) == ["poll dispatch → view", "poll dispatch → ack", "floor → sink"])
        #expect(
            BenchCommand.Run.plotSeries(program: "zflux", e2e: .init(), ack: .init(), floor: nil).map(\.name) == [
                "zflux dispatch → view", "zflux dispatch → ack",
            ])
    }
}

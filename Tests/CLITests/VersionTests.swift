import Testing

@testable import ZFluxCLI

@Suite("--version")
struct VersionTests {
    @Test("the stock binary prints zflux's version; a team's own binary names itself and the zflux it is built on")
    func versionLine() {
        #expect(RootCommand.versionLine(binary: "zflux") == RootCommand.zfluxVersion)
        #expect(RootCommand.versionLine(binary: "poll") == "poll, built on zflux \(RootCommand.zfluxVersion)")
    }
}

import Foundation
import Testing

@testable import ZFluxCLI

@Suite("--version")
struct VersionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the stock binary prints zflux's version and its commit; a team's own binary names itself and the zflux it is built on")
    func versionLine() {
        #expect(RootCommand.versionLine(binary: "zflux", commit: "1640e8b00f7a") == "\(RootCommand.zfluxVersion) (commit 1640e8b00f7a)")
        #expect(RootCommand.versionLine(binary: "poll", commit: nil) == "poll, built on zflux \(RootCommand.zfluxVersion)")
    }

    @Test("the version is a semantic version with its entry in CHANGELOG.md")
    func changelogEntry() throws {
        let version = RootCommand.zfluxVersion
        #expect(version.wholeMatch(of: /\d+\.\d+\.\d+/) != nil, "a semantic version: \(version)")
        let changelog = try String(contentsOf: Self.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        #expect(changelog.contains("\n## [\(version)]"), "CHANGELOG.md has an entry for \(version)")
    }
}

import Foundation
import Testing

@testable import ZFluxCLI

@Suite("--version")
struct VersionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the stock binary prints zflux's version and commit; a team's own binary names itself and the zflux it is built on")
    func versionLine() {
        let zflux = "\(RootCommand.zfluxVersion) (commit \(RootCommand.zfluxCommit))"
        #expect(RootCommand.versionLine(binary: "zflux") == zflux)
        #expect(RootCommand.versionLine(binary: "poll") == "poll, built on zflux \(zflux)")
    }

    @Test("the version is the VERSION file's, CHANGELOG.md has its entry, and the commit is the checkout's")
    func oneHome() throws {
        let version = try String(contentsOf: Self.root.appendingPathComponent("VERSION"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(RootCommand.zfluxVersion == version)
        #expect(version.wholeMatch(of: /\d+\.\d+\.\d+/) != nil, "a semantic version: \(version)")
        let changelog = try String(contentsOf: Self.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        #expect(changelog.contains("\n## [\(version)]"), "CHANGELOG.md has an entry for \(version)")
        // This test runs from a git checkout (CI's clone, a developer's tree): the commit is a real one.
        #expect(RootCommand.zfluxCommit.wholeMatch(of: /[0-9a-f]{12}(-modified)?/) != nil, "\(RootCommand.zfluxCommit)")
    }
}

import ArgumentParser
import Foundation

struct NewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Write a new package built on zflux: an app, its screen, a TestStore and a TestCluster test, a cluster config and a README.",
        discussion: """
            The package's own binary (NAME in lower case) is the whole zflux command line for its app:
              zflux new Poll --output poll --zflux-path /path/to/zflux
              cd poll && swift build && swift test
              .build/debug/poll cluster up --config cluster.toml
            Without --zflux-path, Package.swift names zflux by a placeholder URL that does not resolve: \
            point it at where your team gets zflux from (its README says how) before the first `swift build`.
            """)

    @Argument(help: "The package's name: an identifier starting with an uppercase letter (letters and digits), e.g. Poll.")
    var name: String

    @Option(help: ArgumentHelp("The directory to write the package in; it must not exist or be empty.", valueName: "dir"))
    var output: String

    @Option(help: ArgumentHelp("Depend on the zflux checkout in this directory instead of the placeholder URL.", valueName: "checkout"))
    var zfluxPath: String?

    func run() throws {
        let checkout = zfluxPath.map(Self.absolute)
        if let checkout, !FileManager.default.fileExists(atPath: checkout + "/Package.swift") {
            throw CLIError("--zflux-path \(checkout) is not a zflux checkout: it has no Package.swift")
        }
        let starter = try Starter(name: name, zfluxPath: checkout)
        let directory = Self.absolute(output)
        let written = try starter.write(to: directory)
        emitLine("wrote the package \(name) in \(directory):")
        for path in written { emitLine("  " + path) }
        emitLine("")
        emitLine("next:")
        emitLine("  cd \(directory)")
        if checkout == nil { emitLine("  (point Package.swift at your zflux first: README.md, \"Where zflux comes from\")") }
        emitLine("  swift build && swift test")
        emitLine("  .build/debug/\(starter.appName) cluster up --config cluster.toml")
        emitLine("  .build/debug/\(starter.appName) view \(starter.appName)        # in another terminal")
    }

    /// `path` as an absolute path, relative to the current directory.
    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL.path
    }
}

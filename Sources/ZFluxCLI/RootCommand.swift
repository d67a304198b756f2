import ArgumentParser
import Foundation
import NodeSupport

/// `zflux`: every command, under the name of the binary that runs it.
struct RootCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: RootCommand.binaryName,
        abstract: "Flux / Redux across processes over ZeroMQ.",
        discussion: """
            A dispatcher stamps every action with a global sequence number and \
            broadcasts it; stores apply their reducers in that order and publish \
            their state; views render it.

            Quick start (cluster up stays in the foreground):
              \(RootCommand.binaryName) cluster up
              \(RootCommand.binaryName) apps
              \(RootCommand.binaryName) view STORE
              \(RootCommand.binaryName) dispatch APP ACTION '{"field":"value"}'
              \(RootCommand.binaryName) state STORE

            A team's own binary is this whole command line for its apps: \
            `zflux new NAME --output DIR` writes one (docs/GUIDE.md §6).
            """,
        version: RootCommand.versionLine(binary: RootCommand.binaryName),
        subcommands: [
            DemoCommand.self, ClusterCommand.self, DispatchCommand.self, StateCommand.self, ViewCommand.self,
            StatusCommand.self, QuarantineCommand.self, SchedulesCommand.self, TailCommand.self, TopCommand.self, DevtoolsCommand.self,
            JournalCommand.self,
            BenchCommand.self,
            SimulateCommand.self, KeygenCommand.self,
            FailoverCommand.self, DispatcherCommand.self,
            StoreCommand.self, AppsCommand.self, NewCommand.self,
        ]
    )
}

extension RootCommand {
    /// The name the binary was started by (`zflux`, or a team's own `poll`), for help and messages.
    static var binaryName: String { StandardOutput.programName }

    /// This zflux's version: the one place it is written (CHANGELOG.md has an entry for it).
    static let zfluxVersion = "0.2.0"

    /// What `--version` prints: zflux's version, with the commit the binary was built from when its
    /// executable says so (the stock `zflux` does, ``ZFluxCLI/Host/buildCommit``); or for a team's own
    /// binary its name and the zflux it is built on (`poll, built on zflux 0.2.0`), so that nobody takes
    /// it for the stock binary.
    static func versionLine(binary: String, commit: String? = ZFluxCLI.Host.current.buildCommit) -> String {
        let zflux = zfluxVersion + (commit.map { " (commit \($0))" } ?? "")
        return binary == "zflux" ? zflux : "\(binary), built on zflux \(zflux)"
    }
}

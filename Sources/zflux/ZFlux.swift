import ArgumentParser
import Foundation

@main
struct ZFlux: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zflux",
        abstract: "Flux / Redux across processes over ZeroMQ.",
        discussion: """
            A dispatcher stamps every action with a global sequence number and
            broadcasts it; stores apply their reducers in that order and publish
            their state; views render it.

            Quick start (cluster up stays in the foreground):
              zflux cluster up
              zflux view todo
              zflux dispatch todo addTodo '{"title":"Buy milk"}'
              zflux state todo
            """,
        version: "0.1.0",
        subcommands: [
            DemoCommand.self, ClusterCommand.self, DispatchCommand.self, StateCommand.self, ViewCommand.self,
            StatusCommand.self, TailCommand.self, TopCommand.self, JournalCommand.self, BenchCommand.self, SimulateCommand.self, KeygenCommand.self,
            DispatcherCommand.self,
            StoreCommand.self, AppsCommand.self,
        ]
    )

    /// ArgumentParser's own entry point, after one process-wide setting: a peer that resets a TCP
    /// connection (a metrics probe, a terminal closed under `zflux tail | head`) must turn the next
    /// write into an EPIPE error for the code that wrote, never into a SIGPIPE that kills a node.
    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

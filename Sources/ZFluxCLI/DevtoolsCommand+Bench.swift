import Bench
import DevtoolsServer
import Foundation

extension DevtoolsCommand {
    /// How often the page's latency panel looks for new lines of `bench --attach`'s live feed.
    static let benchFeedPollMilliseconds: UInt32 = 250

    /// Follows the live feed `zflux bench --attach` writes into `runDirectory` (``BenchLiveFeed``), on
    /// a thread of its own, and hands each new line to the hub for every page, until `stopped`. A feed
    /// already there (a run under way, or the last one's) is read from its start.
    static func followBenchFeed(runDirectory: String, hub: DevtoolsHub, stopped: @escaping @Sendable () -> Bool) {
        let thread = Thread {
            var reader = BenchLiveFeedReader(runDirectory: runDirectory)
            while !stopped() {
                let (newRun, lines) = reader.poll()
                if newRun || !lines.isEmpty { hub.bench(lines, newRun: newRun) }
                usleep(benchFeedPollMilliseconds * 1000)
            }
        }
        thread.name = "zflux-devtools-bench"
        thread.start()
    }
}

import NIOCore
import NIOPosix

/// The port of one of zflux's small HTTP servers (a node's metrics port, the devtools page), bound the
/// one way both are: on an event-loop thread of its own, its address reusable at once after a restart,
/// `localhost` bound as 127.0.0.1, and each connection's pipeline set up on the loop by the server.
package final class HTTPListener: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    /// Binds `host:port` (port 0: any free one, then ``port`` says which). Where the bind fails, the
    /// thread is stopped before the error is thrown.
    package init(host: String, port: Int, backlog: Int32, pipeline: @escaping @Sendable (any Channel) throws -> Void) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: backlog)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in channel.eventLoop.makeCompletedFuture { try pipeline(channel) } }
                .bind(host: host == "localhost" ? "127.0.0.1" : host, port: port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        self.group = group
    }

    /// The port it listens on (nil: no longer bound).
    package var port: Int? { channel.localAddress?.port }

    /// Stops listening and closes every connection.
    package func close() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// Waits until the port is closed (after ``close()``).
    package func closed() async throws { try await channel.closeFuture.get() }
}

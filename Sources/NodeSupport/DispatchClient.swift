import FluxCore
import Foundation
import ZeroMQ

/// A dispatch client whose connection lives on a thread of its own, so callers on any thread (an async
/// task, a UI loop) dispatch without blocking: async, or with a completion handler.
public final class DispatchClient: Sendable {
    private let control: NodeControl<Request>

    struct Request: Sendable {
        let app: String, type: String, payload: [UInt8]
        let reply: @Sendable (Result<DispatchOutcome, Error>) -> Void
    }

    public init(intake: String, security: Security.Settings? = nil, context: Context = .shared, timeout: Duration = .seconds(5)) throws {
        control = try NodeControl()
        let control = control
        let thread = Thread {
            guard let connection = try? DispatchConnection(context: context, intake: intake, security: security) else { return }
            defer { connection.close() }
            connection.timeout = timeout
            while !control.stopRequested {
                var poller = Poller()
                poller.add(.fileDescriptor(control.wake.descriptor))
                _ = try? poller.poll(timeoutMilliseconds: 100)
                for request in control.takeAll() {
                    request.reply(Result { try connection.dispatch(app: request.app, actionType: request.type, payload: request.payload) })
                }
            }
        }
        thread.name = "zflux-dispatch-client"
        thread.start()
    }

    /// Dispatches and calls `completion` (on the client's thread) with the outcome.
    public func dispatch(app: String, type: String, payload: [UInt8], completion: @escaping @Sendable (Result<DispatchOutcome, Error>) -> Void) {
        control.post(Request(app: app, type: type, payload: payload, reply: completion))
    }

    public func dispatch(app: String, type: String, payload: [UInt8]) async throws -> DispatchOutcome {
        try await withCheckedThrowingContinuation { continuation in
            dispatch(app: app, type: type, payload: payload) { continuation.resume(with: $0) }
        }
    }

    deinit { control.requestStop() }
}

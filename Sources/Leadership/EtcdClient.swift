import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import Synchronization

/// A client of etcd's v3 API through its JSON gateway (`POST /v3/...`), over plain HTTP/1.1 on swift-nio
/// (``GatewayHTTP``).
///
/// It is given the members' client URLs (`http://127.0.0.1:2379`) and asks one at a time: a member that
/// refuses the connection, does not answer within ``timeout`` or answers 503 (it has lost its quorum) is
/// passed over for the next, and the one that answered is asked first next time. Every call here may be
/// sent again that way: a ``campaign(key:value:lease:)`` whose first attempt went through finds the key
/// held under its own lease and reports the win.
///
/// Each call opens a connection of its own, so there is nothing to close; ``shutdown()`` is kept for
/// callers that end a client's use explicitly.
public final class EtcdClient: Sendable {
    /// The members' client URLs, in the order they are tried.
    public let endpoints: [String]
    /// How long one attempt at one endpoint may take, connection included.
    public let timeout: Duration
    private let gateways: [GatewayHTTP.Endpoint]
    private let http = GatewayHTTP()
    private let logger: Logger
    /// The endpoint that answered last, tried first next time.
    private let preferred = Mutex<Int>(0)
    /// More than any answer here needs (a range of one key).
    private static let answerLimit = 4 << 20

    /// A client of the etcd members at `endpoints` (URLs such as `http://127.0.0.1:2379`).
    public init(endpoints: [String], timeout: Duration = .seconds(2), logger: Logger) throws {
        guard !endpoints.isEmpty else { throw EtcdError(.invalidConfiguration, "no etcd endpoint given") }
        var gateways: [GatewayHTTP.Endpoint] = []
        for endpoint in endpoints {
            if endpoint.hasPrefix("https://") {
                throw EtcdError(
                    .invalidConfiguration,
                    "\(endpoint): zflux talks plain HTTP to etcd's gateway, on the cluster's own network; give an http:// endpoint")
            }
            guard let gateway = GatewayHTTP.Endpoint(endpoint) else {
                throw EtcdError(.invalidConfiguration, "not an etcd endpoint URL (http://HOST:PORT): \(endpoint)")
            }
            gateways.append(gateway)
        }
        self.gateways = gateways
        self.endpoints = endpoints.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.timeout = timeout
        self.logger = logger
    }

    /// Ends the client's use. A call opens and closes its own connection, so nothing is left to close.
    public func shutdown() async throws {}

    /// Sends `body` to `path` on the first member that answers and decodes its answer.
    func call<Answer: Decodable>(_ path: String, _ body: some Encodable, as _: Answer.Type = Answer.self) async throws -> Answer {
        let payload: [UInt8]
        do {
            payload = Array(try JSONEncoder().encode(body))
        } catch {
            throw EtcdError(.invalidConfiguration, "cannot encode the request to \(path)", cause: error)
        }
        let first = preferred.withLock { $0 }
        var failures: [String] = []
        for attempt in endpoints.indices {
            let index = (first + attempt) % endpoints.count
            let endpoint = endpoints[index]
            let status: UInt
            let answer: ByteBuffer
            do {
                // A refused connection fails at once, so that the next member is asked.
                let response = try await http.post(gateways[index], path: path, body: payload, timeout: timeout, limit: Self.answerLimit)
                status = response.status
                answer = response.body
            } catch {
                if Task.isCancelled { throw CancellationError() }
                logger.debug("etcd endpoint failed", metadata: ["endpoint": "\(endpoint)", "path": "\(path)", "error": "\(error)"])
                failures.append("\(endpoint): \(error)")
                continue
            }
            if status == 503 {
                failures.append("\(endpoint): \(Self.failureText(answer))")
                continue
            }
            preferred.withLock { $0 = index }
            guard status == 200 else { throw Self.refusal(path, endpoint: endpoint, status: status, answer: answer) }
            do {
                return try JSONDecoder().decode(Answer.self, from: answer)
            } catch {
                let text = String(buffer: answer).prefix(200)
                throw EtcdError(.malformedAnswer, "\(endpoint)\(path) answered what is not a \(Answer.self): \(text)", cause: error)
            }
        }
        throw EtcdError(.unreachable, "no etcd endpoint answered \(path): \(failures.joined(separator: "; "))")
    }

    /// etcd's own words from a failed call's body, or the body itself when it is not the gateway's JSON.
    static func failureText(_ answer: ByteBuffer) -> String {
        if let failure = try? JSONDecoder().decode(Wire.Failure.self, from: answer) { return failure.text }
        return String(buffer: answer).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func refusal(_ path: String, endpoint: String, status: UInt, answer: ByteBuffer) -> EtcdError {
        let text = failureText(answer)
        if text.contains("lease not found") {
            return EtcdError(.leaseNotFound, "\(path): \(text)", status: Int(status))
        }
        return EtcdError(.rejected, "\(endpoint)\(path) answered \(status): \(text)", status: Int(status))
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

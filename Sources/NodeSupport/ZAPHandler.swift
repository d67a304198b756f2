import Foundation
import Logging
import ZeroMQ

/// libzmq's ZAP handler for this process: admits a CURVE client only when its public key is listed in
/// the authorized-keys file (one Z85 key per line, `#` comments). The file is read again whenever it
/// changes, so keys are added or revoked without a restart. Every refusal is logged with the peer's
/// address and key.
///
/// A socket that names a ZAP domain listed in `domains` admits that domain's keys only, never the
/// file's: a pair's replication endpoint (``replicationDomain``) admits its partner alone.
public final class ZAPHandler: Sendable {
    /// The domain of a pair member's replication endpoint.
    public static let replicationDomain = "zflux-replication"

    private let control: NodeControl<Never>
    /// Moves each time keys are removed from the file; nodes then cut the connections they accepted.
    public let revocations = Revocations()

    /// The lines of an authorized-keys file's text that name a key: one per line, blanks and `#`
    /// comments skipped, each trimmed. What the handler admits, and what `zflux devtools` makes
    /// tokens for, are the keys of these lines.
    package static func listedKeys(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    public init(authorizedKeys path: String, domains: [String: Set<String>] = [:], context: Context = .shared, logger: Logger) throws {
        let domainKeys = domains.mapValues { Set($0.compactMap(Curve.decode)) }
        control = try NodeControl()
        let control = control
        let revocations = revocations
        let socket = try Socket(context, .rep)
        try socket.bind("inproc://zeromq.zap.01")
        // The socket is handed to the handler's thread and never touched here again.
        nonisolated(unsafe) let zap = socket
        let thread = Thread {
            defer { zap.close() }
            var keys = Set<[UInt8]>()
            var loadedAt: Date? = nil
            func reload() {
                let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate]) as? Date
                guard modified != loadedAt else { return }
                loadedAt = modified
                let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
                let previous = keys
                keys = Set(ZAPHandler.listedKeys(text).compactMap(Curve.decode))
                logger.info("authorized keys loaded", metadata: ["file": "\(path)", "keys": "\(keys.count)"])
                let revoked = previous.subtracting(keys)
                if !revoked.isEmpty {
                    logger.notice(
                        "keys revoked; their open connections will be cut",
                        metadata: ["keys": "\(revoked.compactMap(Curve.encode).sorted().joined(separator: ", "))"])
                    revocations.bump()
                }
            }
            while !control.stopRequested {
                var poller = Poller()
                poller.add(.socket(zap))
                poller.add(.fileDescriptor(control.wake.descriptor))
                // The file is looked at ten times a second, so a revocation takes effect without waiting
                // for a new connection to ask.
                let ready = (try? poller.poll(timeoutMilliseconds: 100)) ?? 0
                reload()
                guard ready > 0, let request = try? zap.receive(dontWait: true) else { continue }
                // ZAP 1.0 request: version, request id, domain, address, identity, mechanism, credentials…
                guard request.count >= 6 else { continue }
                reload()
                let domain = String(decoding: request[2], as: UTF8.self)
                let address = String(decoding: request[3], as: UTF8.self)
                let mechanism = String(decoding: request[5], as: UTF8.self)
                let key = request.count >= 7 ? request[6] : []
                let allowed = mechanism == "CURVE" && (domainKeys[domain] ?? keys).contains(key)
                if !allowed {
                    logger.warning(
                        "refused a peer",
                        metadata: [
                            "address": "\(address)", "mechanism": "\(mechanism)", "key": "\(Curve.encode(key) ?? "none")",
                            "domain": "\(domain.isEmpty ? "intake and the rest" : domain)",
                        ])
                }
                let reply: [[UInt8]] = [
                    Array("1.0".utf8), request[1], Array((allowed ? "200" : "400").utf8),
                    Array((allowed ? "OK" : "key not authorized").utf8), allowed ? Array((Curve.encode(key) ?? "").utf8) : [], [],
                ]
                _ = try? zap.send(reply)
            }
        }
        thread.name = "zflux-zap"
        thread.start()
    }

    deinit { control.requestStop() }
}

import FluxCore
import Foundation
import Logging
import Synchronization
import ZeroMQ

/// A CURVE key pair on disk. The secret file (mode 0600) holds both halves; the `.pub` file beside it
/// only the public one, for authorized-keys files.
public struct KeyPair: Equatable, Sendable {
    public var publicKey: String
    public var secretKey: String

    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Writes `NAME.key` (secret, 0600) and `NAME.pub` in `directory`; refuses to overwrite.
    public static func generate(name: String, directory: String) throws -> (secretFile: String, publicFile: String) {
        let pair = try Curve.keyPair()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let secretFile = directory + "/" + name + ".key", publicFile = directory + "/" + name + ".pub"
        for file in [secretFile, publicFile] where FileManager.default.fileExists(atPath: file) {
            throw NodeError("\(file) exists; remove it first to make a new key pair")
        }
        let secret = "# zflux CURVE key pair '\(name)': keep this file secret\npublic-key = \(pair.publicKey)\nsecret-key = \(pair.secretKey)\n"
        guard FileManager.default.createFile(atPath: secretFile, contents: Data(secret.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw NodeError("cannot write \(secretFile)")
        }
        try "# zflux CURVE public key '\(name)'\n\(pair.publicKey)\n".write(toFile: publicFile, atomically: true, encoding: .utf8)
        return (secretFile, publicFile)
    }

    /// Reads a secret key file written by `generate`.
    /// Refuses a file that other users can read or anyone but its owner can change (as ssh does with
    /// private keys). Group read alone is allowed: Kubernetes mounts a Secret with `fsGroup` as 0440.
    public static func load(_ path: String) throws -> KeyPair {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o027 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw NodeError("the secret key file \(path) is open to other users (mode 0\(mode)): run `chmod 600 \(path)`")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw NodeError("cannot read the key file \(path)") }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        guard let publicKey = values["public-key"], Curve.decode(publicKey) != nil,
            let secretKey = values["secret-key"], Curve.decode(secretKey) != nil
        else {
            throw NodeError("\(path) is not a zflux key file (make one with `zflux keygen`)")
        }
        return KeyPair(publicKey: publicKey, secretKey: secretKey)
    }
}

/// CURVE settings, carried explicitly in each node's and client's configuration (no process-wide
/// state): with them, every tcp socket bound is a CURVE server and every tcp socket connected is a
/// CURVE client. ipc and inproc are unaffected (the run directory's file mode guards ipc).
public enum Security {
    public struct Settings: Sendable, Equatable {
        /// The cluster's server key pair: the nodes' bound sockets use it (nil for clients).
        public var server: KeyPair?
        /// The public half of the server key, for connecting.
        public var serverPublicKey: String
        /// This process's own key pair when connecting.
        public var client: KeyPair

        public init(server: KeyPair?, serverPublicKey: String, client: KeyPair) {
            self.server = server
            self.serverPublicKey = serverPublicKey
            self.client = client
        }
    }
}

extension Topology {
    /// The CURVE settings a client of this cluster connects with: the cluster's client key, or the key
    /// pair in `keyFile` (nil when the cluster has no security section).
    public func clientSecurity(keyFile: String? = nil) throws -> Security.Settings? {
        guard let security else { return nil }
        return Security.Settings(server: nil, serverPublicKey: security.serverPublicKey, client: try KeyPair.load(keyFile ?? security.clientKeyFile))
    }
}

extension Socket {
    /// Binds, as a CURVE server when `security` holds a server key and the endpoint is tcp.
    public func bindSecurely(_ endpoint: String, _ security: Security.Settings?) throws {
        if endpoint.hasPrefix("tcp://"), let server = security?.server {
            try makeCurveServer(secretKey: server.secretKey)
        }
        try bind(endpoint)
    }

    /// Connects, as a CURVE client when `security` is set and the endpoint is tcp.
    public func connectSecurely(_ endpoint: String, _ security: Security.Settings?) throws {
        if endpoint.hasPrefix("tcp://"), let security {
            try makeCurveClient(serverKey: security.serverPublicKey, publicKey: security.client.publicKey, secretKey: security.client.secretKey)
        }
        try connect(endpoint)
    }
}

/// How many times keys were revoked in this process (by ``ZAPHandler``). A node's loop compares it each
/// turn and, when it moved, unbinds and binds again every tcp endpoint it listens on: libzmq closes the
/// connections accepted through an endpoint when it is unbound, and every peer that reconnects meets
/// the ZAP handler again, where a revoked key is refused.
public final class Revocations: Sendable {
    private let count = Mutex<UInt64>(0)
    public init() {}
    public var generation: UInt64 { count.withLock { $0 } }
    func bump() { count.withLock { $0 += 1 } }
}

/// A node loop's view of ``Revocations``: each turn it asks whether keys were revoked since it last
/// looked, and if so binds its tcp endpoints anew, which cuts every connection accepted through them.
public struct RevocationWatch {
    let revocations: Revocations?
    var seen: UInt64

    public init(_ revocations: Revocations?) {
        self.revocations = revocations
        seen = revocations?.generation ?? 0
    }

    /// Binds every tcp endpoint of `bound` again when keys were revoked since the last call.
    public mutating func cutIfRevoked(_ bound: [(socket: Socket, endpoint: String)], logger: Logger, metadata: Logger.Metadata = [:]) {
        guard let revocations, revocations.generation != seen else { return }
        seen = revocations.generation
        for (socket, endpoint) in bound where endpoint.hasPrefix("tcp://") {
            do {
                try socket.rebind(endpoint)
            } catch {
                logger.error(
                    "could not bind again after a revocation", metadata: metadata.merging(["endpoint": "\(endpoint)", "error": "\(error)"]) { $1 })
            }
        }
        logger.notice("a key was revoked: every connection was cut; listed peers reconnect", metadata: metadata)
    }
}

extension Socket {
    /// Unbinds `endpoint` (closing every connection accepted through it) and binds it again, retrying
    /// while the old listener is still being torn down.
    public func rebind(_ endpoint: String) throws {
        try unbind(endpoint)
        var attempts = 0
        while true {
            do {
                try bind(endpoint)
                return
            } catch {
                attempts += 1
                guard attempts < 100 else { throw error }
                usleep(10_000)
            }
        }
    }
}

/// libzmq's ZAP handler for this process: admits a CURVE client only when its public key is listed in
/// the authorized-keys file (one Z85 key per line, `#` comments). The file is read again whenever it
/// changes, so keys are added or revoked without a restart. Every refusal is logged with the peer's
/// address and key.
public final class ZAPHandler: Sendable {
    private let control: NodeControl<Never>
    /// Moves each time keys are removed from the file; nodes then cut the connections they accepted.
    public let revocations = Revocations()

    public init(authorizedKeys path: String, context: Context = .shared, logger: Logger) throws {
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
                keys = Set(
                    text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                        .filter { !$0.isEmpty && !$0.hasPrefix("#") }.compactMap(Curve.decode))
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
                let address = String(decoding: request[3], as: UTF8.self)
                let mechanism = String(decoding: request[5], as: UTF8.self)
                let key = request.count >= 7 ? request[6] : []
                let allowed = mechanism == "CURVE" && keys.contains(key)
                if !allowed {
                    logger.warning(
                        "refused a peer",
                        metadata: [
                            "address": "\(address)", "mechanism": "\(mechanism)", "key": "\(Curve.encode(key) ?? "none")",
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

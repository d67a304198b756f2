import Foundation
import Logging
import Spawn
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A single-member etcd of its own, on free loopback ports with its data in a fresh temporary directory:
/// for tests, and for a local cluster that wants leader election without an etcd of the user's.
///
/// ``start(executable:startTimeout:logger:)`` returns once etcd answers on its client URL. ``stop()``
/// (or the deinit) ends it and removes its directory; ``kill()`` ends it at once, as a crash would.
///
/// etcd is a `ChildProcess` started with `diesWithParent`: the kernel kills it if this process dies
/// without stopping it.
package final class EtcdProcess: Sendable {
    /// The client URL, `http://127.0.0.1:PORT`.
    package let endpoint: String
    /// The member's name, unique to this start.
    package let name: String
    /// The temporary directory holding the data directory and the log.
    package let directory: String
    /// etcd's output.
    package var logPath: String { directory + "/etcd.log" }
    package var pid: pid_t { process.pid }
    private let process: ChildProcess
    private let stopped = Mutex(false)

    /// The directory is the caller's (`dataDirectory`): stopping leaves it.
    private let keepsDirectory: Bool

    private init(endpoint: String, name: String, directory: String, process: ChildProcess, keepsDirectory: Bool = false) {
        self.keepsDirectory = keepsDirectory
        self.endpoint = endpoint
        self.name = name
        self.directory = directory
        self.process = process
    }

    /// True until etcd has exited.
    package var isRunning: Bool { process.isRunning }

    /// Starts etcd (`executable`, or the first `etcd` on PATH or in /usr/bin) and waits until it answers on
    /// its client URL, or throws after `startTimeout` with the end of its log.
    ///
    /// `dataDirectory`: keep etcd's data there across runs (kept on stop), so that its revisions, the
    /// epochs of a dispatcher pair, go on growing; nil: a fresh temporary directory, removed on stop.
    package static func start(
        executable: String? = nil, dataDirectory: String? = nil, startTimeout: Duration = .seconds(30), logger: Logger
    ) async throws -> EtcdProcess {
        guard let binary = executable ?? findEtcd() else {
            throw EtcdError(
                .invalidConfiguration,
                "no etcd binary on PATH or at /usr/bin/etcd: install etcd-server (make deps does), or name a running etcd in the config's [ha] etcd")
        }
        // A port found free may be taken before etcd binds it; another pair of ports then does.
        var failures: [String] = []
        for _ in 0..<3 {
            let process = try spawn(binary, dataDirectory: dataDirectory)
            do {
                try await process.waitUntilAnswering(timeout: startTimeout, logger: logger)
                logger.debug("etcd started", metadata: ["endpoint": "\(process.endpoint)", "pid": "\(process.pid)"])
                return process
            } catch let error as EtcdError where !process.isRunning {
                failures.append(error.message)
                process.stop()
            } catch {
                process.stop()
                throw error
            }
        }
        throw EtcdError(.unreachable, "etcd did not start: \(failures.joined(separator: "; "))")
    }

    /// SIGTERM, up to `grace` for etcd to exit, then SIGKILL; then removes the directory. Blocks until etcd
    /// is reaped; does nothing the second time.
    package func stop(grace: Duration = .seconds(10)) {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        process.stop(grace: grace)
        if !keepsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// SIGKILL, as a crash or a power cut would; waits until etcd is reaped. The directory stays until
    /// ``stop()``.
    package func kill() { process.kill() }

    deinit { stop() }

    /// Waits up to `timeout` for etcd to exit; true if it has.
    @discardableResult
    package func waitForExit(timeout: Duration) -> Bool { process.waitForExit(timeout: timeout) }

    /// Asks the client URL until etcd answers, giving up when etcd exits or `timeout` passes.
    private func waitUntilAnswering(timeout: Duration, logger: Logger) async throws {
        let client = try EtcdClient(endpoints: [endpoint], timeout: .seconds(1), logger: logger)
        let outcome: Result<Void, any Error>
        do {
            try await poll(client, until: ContinuousClock.now + timeout)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        try? await client.shutdown()
        try outcome.get()
    }

    private func poll(_ client: EtcdClient, until deadline: ContinuousClock.Instant) async throws {
        while true {
            guard isRunning else { throw EtcdError(.unreachable, "etcd exited during start: \(logTail())") }
            do {
                _ = try await client.get("/zflux/etcd-process/ready")
                return
            } catch {
                guard ContinuousClock.now < deadline else {
                    throw EtcdError(.unreachable, "etcd did not answer at \(endpoint) in time: \(logTail())", cause: error)
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    private func logTail() -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(3).joined(separator: " | ")
    }

    private static func findEtcd() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/etcd" } + ["/usr/bin/etcd"]
        return candidates.first { access($0, X_OK) == 0 }
    }

    /// Starts etcd on fresh ports in a fresh directory.
    private static func spawn(_ binary: String, dataDirectory: String?) throws -> EtcdProcess {
        let directory: String
        if let dataDirectory {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            directory = dataDirectory
        } else {
            var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("zflux-etcd-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else {
                throw EtcdError(.invalidConfiguration, "cannot make a temporary directory: \(String(cString: strerror(errno)))")
            }
            directory = String(cString: made)
        }
        let clientPort = try freePort()
        let peerPort = try freePort()
        // A data directory kept across runs names its member: the same name each time.
        let name = dataDirectory == nil ? "zflux-\(getpid())-\(clientPort)" : "zflux"
        let endpoint = "http://127.0.0.1:\(clientPort)"
        let peer = "http://127.0.0.1:\(peerPort)"
        let arguments = [
            "--name", name, "--data-dir", directory + "/data",
            "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", "\(name)=\(peer)", "--initial-cluster-state", "new",
            "--logger", "zap", "--log-outputs", "stderr",
        ]
        // etcd reads ETCD_* variables as flags: none of the caller's may change this member.
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ETCD_") }
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable: binary, arguments: arguments, environment: environment,
                output: .appended(to: directory + "/etcd.log"), diesWithParent: true)
        } catch {
            if dataDirectory == nil { try? FileManager.default.removeItem(atPath: directory) }
            throw EtcdError(.invalidConfiguration, error.message)
        }
        return EtcdProcess(endpoint: endpoint, name: name, directory: directory, process: process, keepsDirectory: dataDirectory != nil)
    }

    /// A loopback TCP port nothing listens on now (the kernel's pick for a socket bound to port 0).
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw EtcdError(.invalidConfiguration, "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else { throw EtcdError(.invalidConfiguration, "cannot find a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

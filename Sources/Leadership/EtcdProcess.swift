import Foundation
import Logging
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
/// Like the supervisor's `ChildProcess`, it learns of the exit from `waitpid` on a thread of its own. That
/// thread also spawns etcd, under `setpriv --pdeathsig KILL` where setpriv exists: the kernel then kills
/// etcd if this process dies without stopping it. The signal is tied to the thread that spawned, and this
/// one lives exactly as long as etcd does, so it fires only when this process is gone.
package final class EtcdProcess: Sendable {
    /// The client URL, `http://127.0.0.1:PORT`.
    package let endpoint: String
    /// The member's name, unique to this start.
    package let name: String
    /// The temporary directory holding the data directory and the log.
    package let directory: String
    /// etcd's output.
    package var logPath: String { directory + "/etcd.log" }
    package let pid: pid_t
    private let exit: Exit
    private let stopped = Mutex(false)

    /// What the reaper thread shares with its owner.
    private final class Exit: Sendable {
        let reaped = DispatchSemaphore(value: 0)
        let ended = Mutex(false)
    }

    /// The directory is the caller's (`dataDirectory`): stopping leaves it.
    private let keepsDirectory: Bool

    private init(endpoint: String, name: String, directory: String, pid: pid_t, exit: Exit, keepsDirectory: Bool = false) {
        self.keepsDirectory = keepsDirectory
        self.endpoint = endpoint
        self.name = name
        self.directory = directory
        self.pid = pid
        self.exit = exit
    }

    /// True until etcd has exited.
    package var isRunning: Bool { !exit.ended.withLock { $0 } }

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
            let process = try await spawn(binary, dataDirectory: dataDirectory)
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
        if isRunning {
            Glibc.kill(pid, SIGTERM)
            if !waitForExit(timeout: grace) {
                Glibc.kill(pid, SIGKILL)
                waitForExit(timeout: .seconds(60))
            }
        }
        if !keepsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// SIGKILL, as a crash or a power cut would; waits until etcd is reaped. The directory stays until
    /// ``stop()``.
    package func kill() {
        if isRunning { Glibc.kill(pid, SIGKILL) }
        waitForExit(timeout: .seconds(60))
    }

    deinit { stop() }

    /// Waits up to `timeout` for etcd to exit; true if it has.
    @discardableResult
    package func waitForExit(timeout: Duration) -> Bool {
        if !isRunning { return true }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        guard exit.reaped.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return false }
        exit.reaped.signal()  // for the next waiter
        return true
    }

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

    /// Starts etcd on fresh ports in a fresh directory, from a thread that then waits for its exit.
    private static func spawn(_ binary: String, dataDirectory: String?) async throws -> EtcdProcess {
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
        let command = [
            binary, "--name", name, "--data-dir", directory + "/data",
            "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", "\(name)=\(peer)", "--initial-cluster-state", "new",
            "--logger", "zap", "--log-outputs", "stderr",
        ]
        let setpriv = "/usr/bin/setpriv"
        let arguments = access(setpriv, X_OK) == 0 ? [setpriv, "--pdeathsig", "KILL", "--"] + command : command
        // etcd reads ETCD_* variables as flags: none of the caller's may change this member.
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ETCD_") }

        let exit = Exit()
        let log = directory + "/etcd.log"
        let spawned = await withCheckedContinuation { (started: CheckedContinuation<Int32, Never>) in
            let thread = Thread {
                var child: pid_t = 0
                let result = spawnProcess(arguments, environment: environment, log: log, pid: &child)
                started.resume(returning: result == 0 ? child : -result)
                guard result == 0 else { return }
                var status: Int32 = 0
                while waitpid(child, &status, 0) == -1 && errno == EINTR {}
                exit.ended.withLock { $0 = true }
                exit.reaped.signal()
            }
            thread.name = "zflux-etcd"
            thread.start()
        }
        guard spawned > 0 else {
            if dataDirectory == nil { try? FileManager.default.removeItem(atPath: directory) }
            throw EtcdError(.invalidConfiguration, "cannot start \(binary): \(String(cString: strerror(-spawned)))")
        }
        return EtcdProcess(endpoint: endpoint, name: name, directory: directory, pid: spawned, exit: exit, keepsDirectory: dataDirectory != nil)
    }

    /// posix_spawn with stdin from /dev/null, stdout and stderr to `log`, every signal at its default, in a
    /// process group of its own (Ctrl-C at a terminal reaches the test run, which stops etcd itself).
    /// Returns posix_spawn's result.
    private static func spawnProcess(_ arguments: [String], environment: [String: String], log: String, pid: inout pid_t) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        return posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
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

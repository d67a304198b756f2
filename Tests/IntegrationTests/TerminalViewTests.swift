import FluxTesting
import Foundation
import Testing

/// Runs tmux on a private server socket, so a test never touches anyone else's sessions.
struct Tmux {
    let socket = "zflux-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

    /// Runs a tmux command through posix_spawn and waitpid. Foundation's Process does not reliably see
    /// the exit of a client that leaves a daemon (the tmux server) behind, and the server keeps any pipe
    /// it inherits, so output goes through a file.
    @discardableResult
    func run(_ arguments: [String], capture: Bool = false) throws -> CommandResult {
        let output = NSTemporaryDirectory() + "\(socket)-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, capture ? output : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = (["tmux", "-L", socket] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The server and the programs in its panes start with default signal handling and nothing
        // blocked: a test thread's mask would otherwise be inherited, and hang-ups never delivered.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, "tmux", &actions, &attributes, argv, environ)
        guard rc == 0 else { throw CancellationError() }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitCode = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let text = capture ? ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "") : ""
        return CommandResult(status: exitCode, stdout: text, stderr: "")
    }

    /// A session that lives until `kill-server`: the server exits when its last session ends, and a
    /// session started while it is exiting would go down with it.
    func keepServerAlive() throws { try run(["new-session", "-d", "-s", "keep-alive", "sleep 600"]) }

    func screen(_ session: String = "view") throws -> String { try run(["capture-pane", "-p", "-t", session], capture: true).stdout }

    /// Waits (bounded) until the screen contains every one of `texts`; returns the screen.
    @discardableResult
    func waitFor(_ texts: [String], in session: String = "view", timeout: Duration = .seconds(60)) async throws -> String {
        var last = ""
        do {
            try await eventually("the screen to show \(texts)", timeout: timeout, interval: .milliseconds(50)) {
                last = try screen(session)
                return texts.allSatisfy(last.contains)
            }
        } catch {
            // What runs in the panes, for a screen that stayed blank.
            let panes =
                (try? run(["list-panes", "-a", "-F", "#{session_name} pid #{pane_pid} dead #{pane_dead} #{pane_current_command}"], capture: true))?
                .stdout ?? ""
            Issue.record("the screen:\n\(last)\npanes:\n\(panes)")
            throw error
        }
        return last
    }
}

@Suite("The terminal viewer, driven through tmux", .serialized, .timeLimit(.minutes(4)))
struct TerminalViewTests {
    @Test("type a todo and Enter: it is listed and the title counts it; a 2-character title shows Add disabled and, sent anyway, the rejection")
    func todoInTmux() async throws {
        let tmux = Tmux()
        #expect(try tmux.run(["-V"]).status == 0, "tmux is installed (make test installs it)")
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        defer { _ = try? tmux.run(["kill-server"]) }
        // No --supervisor-pid: inside tmux the parent is the tmux server; kill-server ends the viewer.
        let command = "\(zfluxBinary) view todo --run-dir \(cluster.runDir)"
        try tmux.run(["new-session", "-d", "-s", "view", "-x", "100", "-y", "24", command])
        try await tmux.waitFor(["TODO - (0)", "todo · version 0", "live"])

        try tmux.run(["send-keys", "-t", "view", "-l", "Buy milk"])
        try await tmux.waitFor(["New todo: Buy milk", "[Add] enabled"])
        try tmux.run(["send-keys", "-t", "view", "Enter"])
        let added = try await tmux.waitFor(["TODO - (1)", "[ ] Buy milk", "addTodo sequenced as 1", "version 1"])
        #expect(added.contains("e2e "), "the status bar shows the latency of this viewer's own dispatch:\n\(added)")

        try tmux.run(["send-keys", "-t", "view", "-l", "ab"])
        try await tmux.waitFor(["New todo: ab", "[Add] disabled"])
        try tmux.run(["send-keys", "-t", "view", "Enter"])
        try await tmux.waitFor(["addTodo rejected: a todo title needs at least 3 characters", "TODO - (1)"])

        // The list: Tab to it, d removes the selected todo.
        try tmux.run(["send-keys", "-t", "view", "Tab"])
        try tmux.run(["send-keys", "-t", "view", "-l", "d"])
        try await tmux.waitFor(["TODO - (0)", "removeTodo sequenced as 2"])

        // Ctrl-C leaves the alternate screen and ends the viewer.
        try tmux.run(["send-keys", "-t", "view", "C-c"])
        try await eventually("the viewer to exit on Ctrl-C", timeout: .seconds(30), interval: .milliseconds(50)) {
            try tmux.run(["has-session", "-t", "view"]).status != 0
        }
    }

    @Test("200 characters pasted into every text field of every screen reach the stores exactly")
    func pasteIntoEveryTextField() async throws {
        let tmux = Tmux()
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        defer { _ = try? tmux.run(["kill-server"]) }
        func state(_ store: String) throws -> [String: Any] {
            let answer = try cluster.zflux(["state", store])
            let object = try JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: Any]
            return object?["state"] as? [String: Any] ?? [:]
        }
        func pasted(_ seed: String) -> String { String((0..<200).map { Array(seed)[$0 % seed.count] }) }
        let username = pasted("ada.lovelace+analytical@example.com")
        let password = pasted("Correct-Horse_Battery9Staple")
        let title = pasted("Buy milk, eggs and 12 loaves; ")

        try tmux.run(["new-session", "-d", "-s", "login", "-x", "100", "-y", "24", "\(zfluxBinary) view login --run-dir \(cluster.runDir)"])
        try await tmux.waitFor(["Username:", "login · version", "live"], in: "login")
        // One burst each: tmux writes the characters to the terminal at once, as a paste does.
        try tmux.run(["send-keys", "-t", "login", "-l", username])
        try tmux.run(["send-keys", "-t", "login", "Tab"])
        try tmux.run(["send-keys", "-t", "login", "-l", password])
        try await eventually("the login store to hold both fields", timeout: .seconds(60)) {
            let login = try state("login")
            return login["username"] as? String == username && login["password"] as? String == password
        }

        try tmux.run(["new-session", "-d", "-s", "todo", "-x", "100", "-y", "24", "\(zfluxBinary) view todo --run-dir \(cluster.runDir)"])
        try await tmux.waitFor(["TODO - (0)", "live"], in: "todo")
        try tmux.run(["send-keys", "-t", "todo", "-l", title])
        try tmux.run(["send-keys", "-t", "todo", "Enter"])
        try await eventually("the todo store to hold the title", timeout: .seconds(60)) {
            let todos = try state("todo")["todos"] as? [[String: Any]]
            return todos?.first?["title"] as? String == title.trimmingCharacters(in: .whitespaces)
        }

        // Closing the terminal (tmux hangs its panes up) ends both viewers.
        let viewers = try tmux.run(["list-panes", "-a", "-F", "#{pane_pid}"], capture: true).stdout.split(separator: "\n").compactMap { Int32($0) }
        #expect(viewers.count == 2)
        try tmux.run(["kill-server"])
        do {
            try await eventually("the viewers to exit on SIGHUP", timeout: .seconds(30), interval: .milliseconds(50)) {
                viewers.allSatisfy { !isRunning($0) }
            }
        } catch {
            for pid in viewers where isRunning(pid) {
                let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "?"
                let wchan = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "?"
                Issue.record("viewer \(pid) still runs: \(state) waiting in \(wchan)")
                kill(pid, SIGKILL)
            }
            throw error
        }
    }

    @Test(
        "view --history: the timeline beside the screen, stepping, jumping, filtering, live updates in the status bar, L back to live; ? and resize")
    func historyInTmux() async throws {
        let tmux = Tmux()
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        defer { _ = try? tmux.run(["kill-server"]) }
        for title in ["Buy milk", "Walk dog", "Read book"] { _ = try cluster.zflux(["dispatch", "todo", "addTodo", "{\"title\":\"\(title)\"}"]) }
        _ = try cluster.zflux(["dispatch", "counter", "incrementTapped"])
        _ = try cluster.zflux(["dispatch", "todo", "toggleTodo", #"{"index":1}"#])
        try tmux.run(["new-session", "-d", "-s", "view", "-x", "110", "-y", "28", "\(zfluxBinary) view todo --history --run-dir \(cluster.runDir)"])
        try await tmux.waitFor(["▶ 5  todo.toggleTodo", "~ todos[1].done: false → true", "[x] Walk dog", "live at version 5"])
        try tmux.run(["send-keys", "-t", "view", "Left"])
        try await tmux.waitFor(["▶ 3  todo.addTodo", "payload {\"addTodo\":{\"title\":\"Read book\"}}", "[ ] Walk dog"])
        try tmux.run(["send-keys", "-t", "view", "g", "1", "Enter"])
        try await tmux.waitFor(["▶ 1  todo.addTodo", "TODO - (1)"])
        try tmux.run(["send-keys", "-t", "view", "/", "toggle", "Enter"])
        let filtered = try await tmux.waitFor(["timeline /toggle", "▶ 5  todo.toggleTodo"])
        #expect(!filtered.contains("2  todo.addTodo"), "the filter hides other actions:\n\(filtered)")
        // The past stays on screen while the live version moves on in the status bar.
        _ = try cluster.zflux(["dispatch", "todo", "addTodo", #"{"title":"Later"}"#])
        try await tmux.waitFor(["live at version 6", "▶ 5  todo.toggleTodo"])
        try tmux.run(["send-keys", "-t", "view", "?"])
        try await tmux.waitFor(["Keys of todo (history)", "g           jump to seq", "Ctrl-N      next store"])
        try tmux.run(["send-keys", "-t", "view", "Escape"])
        try tmux.run(["send-keys", "-t", "view", "L"])
        try await tmux.waitFor(["TODO - (4)", "back to live", "todo · version 6"])
        // A smaller window: everything is drawn again to fit it, the status bar on the last row.
        try tmux.run(["resize-window", "-t", "view", "-x", "60", "-y", "16"])
        let resized = try await tmux.waitFor(["todo · version 6"])
        #expect(resized.split(separator: "\n", omittingEmptySubsequences: false).prefix(16).last?.contains("todo · version 6") == true, "\(resized)")
    }

    @Test("tail and top on a terminal: / filters their lines, ? lists the keys, q quits")
    func tailAndTopFilterInTmux() async throws {
        let tmux = Tmux()
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        defer { _ = try? tmux.run(["kill-server"]) }
        try tmux.keepServerAlive()
        try tmux.run(["new-session", "-d", "-s", "view", "-x", "120", "-y", "24", "\(zfluxBinary) tail --run-dir \(cluster.runDir)"])
        try await tmux.waitFor(["zflux tail", "/ filter"])
        // The subscription takes a moment: dispatch until the screen shows one.
        try await eventually("tail to show a counter action", timeout: .seconds(60)) {
            _ = try cluster.zflux(["dispatch", "counter", "incrementTapped"])
            return try tmux.screen().contains("counter.incrementTapped")
        }
        _ = try cluster.zflux(["dispatch", "todo", "addTodo", #"{"title":"Tea for two"}"#])
        try await tmux.waitFor(["todo.addTodo"])
        try tmux.run(["send-keys", "-t", "view", "/", "TODO", "Enter"])
        let filtered = try await tmux.waitFor(["filter: TODO", "Tea for two"])
        #expect(!filtered.contains("counter.incrementTapped"), "the filter hides the counter's lines:\n\(filtered)")
        try tmux.run(["send-keys", "-t", "view", "?"])
        try await tmux.waitFor(["Keys of zflux tail", "/           filter"])
        try tmux.run(["send-keys", "-t", "view", "Escape"])
        try tmux.run(["send-keys", "-t", "view", "q"])
        try await eventually("tail to quit on q", timeout: .seconds(30), interval: .milliseconds(50)) {
            try tmux.run(["has-session", "-t", "view"]).status != 0
        }

        try tmux.run(["new-session", "-d", "-s", "view", "-x", "140", "-y", "24", "\(zfluxBinary) top --run-dir \(cluster.runDir)"])
        try await tmux.waitFor(["zflux top", "dispatcher", "counter"])
        try tmux.run(["send-keys", "-t", "view", "/", "count", "Enter"])
        let top = try await tmux.waitFor(["filter: count", "counter"])
        #expect(!top.contains("dispatcher ") && !top.contains("primes"), "only the counter's row:\n\(top)")
        try tmux.run(["send-keys", "-t", "view", "q"])
        try await eventually("top to quit on q", timeout: .seconds(30), interval: .milliseconds(50)) {
            try tmux.run(["has-session", "-t", "view"]).status != 0
        }
    }

    @Test("NO_COLOR: the viewer, top and tail draw without any colour or style; without it they use them")
    func noColor() async throws {
        let tmux = Tmux()
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        defer { _ = try? tmux.run(["kill-server"]) }
        try tmux.keepServerAlive()
        for (name, command, shown) in [
            ("view", "view counter", "counter · version"), ("top", "top", "zflux top"), ("tail", "tail", "zflux tail"),
        ] {
            for plain in [true, false] {
                let session = "\(name)-\(plain)"
                let program = (plain ? "env NO_COLOR=1 " : "env -u NO_COLOR ") + "\(zfluxBinary) \(command) --run-dir \(cluster.runDir)"
                try tmux.run(["new-session", "-d", "-s", session, "-x", "120", "-y", "24", program])
                try await tmux.waitFor([shown], in: session)
                // -e keeps the cells' styles as escape sequences.
                let styled = try tmux.run(["capture-pane", "-p", "-e", "-t", session], capture: true).stdout
                #expect(styled.contains("\u{1B}[") != plain, "\(name), NO_COLOR \(plain ? "set" : "unset"):\n\(styled)")
                try tmux.run(["kill-session", "-t", session])
            }
        }
    }

    @Test("tail prints each action as it happens; top --once lists every node")
    func tailAndTop() async throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let (tail, collected) = try startTail(["--app", "counter"], runDir: cluster.runDir)
        defer { if tail.isRunning { kill(tail.processIdentifier, SIGTERM) }; tail.waitUntilExit() }
        // The subscription takes a moment: dispatch until tail shows one (bounded).
        try await eventually("tail to show a counter action") {
            _ = try cluster.zflux(["dispatch", "counter", "incrementTapped"])
            _ = try cluster.zflux(["dispatch", "todo", "addTodo", #"{"title":"not shown"}"#])
            return collected.withLock { String(decoding: $0, as: UTF8.self) }.contains("\"type\":\"incrementTapped\"")
        }
        let text = collected.withLock { String(decoding: $0, as: UTF8.self) }
        #expect(!text.contains("not shown"), "--app filters")

        // The running tail is one of the dispatcher's subscribers, beside the eight stores.
        // Unfiltered, tail also shows what a store rejected.
        let (all, allText) = try startTail([], runDir: cluster.runDir)
        defer { if all.isRunning { kill(all.processIdentifier, SIGTERM) }; all.waitUntilExit() }
        try await eventually("tail to show a rejection") {
            _ = try cluster.zflux(["dispatch", "todo", "removeTodo", #"{"index":42}"#])
            return allText.withLock { String(decoding: $0, as: UTF8.self) }.contains(#""rejected_by":"todo","type":"removeTodo""#)
        }
        #expect(allText.withLock { String(decoding: $0, as: UTF8.self) }.contains("there is no todo at index 42"))

        let top = try cluster.zflux(["top", "--once"])
        #expect(top.status == 0)
        let dispatcherRow = top.stdout.split(separator: "\n").first { $0.hasPrefix("dispatcher") }.map { $0.split(separator: " ").map(String.init) }
        #expect(dispatcherRow?[7] == "10", "8 stores and the two tails subscribe to the actions: \(top.stdout)")
        for name in ["dispatcher", "todo", "star", "filter", "login", "counter", "stats", "primes", "food"] { #expect(top.stdout.contains(name)) }
        #expect(top.stdout.contains("RESTARTS") && top.stdout.contains("JOURNAL"))
        #expect(!top.stdout.contains("q quit"), "a table printed once has no keys to press: \(top.stdout)")
        kill(tail.processIdentifier, SIGTERM)
        tail.waitUntilExit()
        #expect(tail.terminationStatus == 0)
    }
}

/// Whether `pid` is a live process: a zombie (exited, not yet reaped by whoever inherited it) is not.
func isRunning(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return false }
    let state = stat[stat.index(close, offsetBy: 2)...].first
    return state != "Z" && state != "X"
}

/// Starts `zflux tail --json ARGS` and collects what it prints as it comes.
func startTail(_ arguments: [String], runDir: String) throws -> (Process, Locked<Data>) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: zfluxBinary)
    process.arguments = ["tail", "--json"] + arguments + ["--run-dir", runDir]
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    let collected = Locked(Data())
    Thread {
        while true {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { return }
            collected.withLock { $0.append(data) }
        }
    }.start()
    return (process, collected)
}

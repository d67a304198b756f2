import Leadership
import Logging
import Synchronization
import Testing

/// Warnings and worse: a keepalive failing while etcd is down is worth reading when a test fails.
let testLogger: Logger = {
    var logger = Logger(label: "leadership-tests")
    logger.logLevel = .warning
    return logger
}()

/// Runs `body` against an etcd of its own, then stops it and removes its directory, whatever happened.
func withEtcd(_ body: (EtcdProcess, EtcdClient) async throws -> Void) async throws {
    let etcd = try await EtcdProcess.start(logger: testLogger)
    // 10 s a request: a deadline against a hang, not a measure. etcd syncs each write, and on a machine
    // whose disk is busy (a journal bench beside it) the client's default 2 s was not enough.
    let client = try EtcdClient(endpoints: [etcd.endpoint], timeout: .seconds(10), logger: testLogger)
    do {
        try await body(etcd, client)
    } catch {
        try? await client.shutdown()
        etcd.stop()
        throw error
    }
    try await client.shutdown()
    etcd.stop()
    #expect(!etcd.isRunning)
}

struct TimedOut: Error, CustomStringConvertible {
    let description: String
}

/// Waits until `condition` holds, checking every 20 ms, or throws after `timeout`.
func eventually(_ what: String, timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    // Checked once more after the deadline: a starved task may wake long after it, with the condition met.
    while true {
        let late = ContinuousClock.now >= deadline
        if try await condition() { return }
        guard !late else { throw TimedOut(description: "not within \(timeout): \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// What an agent reported, with when.
final class EventLog: Sendable {
    private let events = Mutex<[(at: ContinuousClock.Instant, event: LeadershipEvent)]>([])

    func record(_ event: LeadershipEvent) {
        events.withLock { $0.append((ContinuousClock.now, event)) }
    }

    var all: [LeadershipEvent] { events.withLock { $0.map(\.event) } }

    /// The first event after `index` (counting all events) that `matches`, with its time.
    func first(from index: Int = 0, _ matches: (LeadershipEvent) -> Bool) -> (at: ContinuousClock.Instant, event: LeadershipEvent)? {
        events.withLock { $0.dropFirst(index).first { matches($0.event) } }
    }

    var count: Int { events.withLock { $0.count } }

    /// Waits for an event that `matches`, after the first `index` ones.
    func wait(
        for what: String, from index: Int = 0, timeout: Duration = .seconds(30), _ matches: @escaping (LeadershipEvent) -> Bool
    ) async throws -> (at: ContinuousClock.Instant, event: LeadershipEvent) {
        try await eventually("\(what); saw \(all)", timeout: timeout) { first(from: index, matches) != nil }
        guard let found = first(from: index, matches) else { throw TimedOut(description: what) }
        return found
    }
}

extension LeadershipEvent {
    var epoch: Int64? {
        switch self {
        case .elected(let epoch): epoch
        case .leaderIs(_, let epoch): epoch
        case .lost: nil
        }
    }

    var isElected: Bool { if case .elected = self { true } else { false } }
    var isLost: Bool { if case .lost = self { true } else { false } }
}

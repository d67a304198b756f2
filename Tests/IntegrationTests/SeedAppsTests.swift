import Examples
import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Testing

/// The seed apps as a user meets them: the real binary, the default cluster, live and mock environments.
@Suite("Seed apps in real processes", .serialized, .timeLimit(.minutes(3)))
struct SeedAppsTests {
    struct Reply<S: Decodable>: Decodable { var version: UInt64; var state: S }

    func state<S: Decodable>(_ cluster: ClusterProcess, _ store: String, as: S.Type, until condition: @escaping (S) -> Bool) async throws -> S {
        var found: S?
        try await eventually("store \(store) to reach the expected state", timeout: .seconds(30), interval: .milliseconds(50)) {
            let result = try cluster.zflux(["state", store])
            // As a script reads it: its dates are ISO 8601 texts, which JSONPayloadCodec reads.
            guard result.status == 0, let reply = try? JSONPayloadCodec().decode(Reply<S>.self, from: Array(result.stdout.utf8)) else { return false }
            if condition(reply.state) { found = reply.state }
            return found != nil
        }
        return try #require(found)
    }

    func dispatch(_ cluster: ClusterProcess, _ app: String, _ type: String, _ arguments: String = "") throws {
        let result = try cluster.zflux(["dispatch", app, type] + (arguments.isEmpty ? [] : [arguments]))
        #expect(result.status == 0, "\(app).\(type): \(result.stderr)")
    }

    @Test("live environments: a favourite prime is saved to a file in the run directory, and read back by a fresh store")
    func liveFiles() async throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        for _ in 0..<3 { try dispatch(cluster, "primes", "incrementTapped") }
        try dispatch(cluster, "primes", "favoriteToggled")
        let file = RunDirectory(cluster.runDir).dataDirectory(of: "primes") + "/" + Primes.favoritesFile
        try await eventually("the favourite to be written to \(file)", timeout: .seconds(60)) {
            guard let data = FileManager.default.contents(atPath: file) else { return false }
            return (try? JSONDecoder().decode([Primes.Favorite].self, from: data))?.map(\.prime) == [3]
        }
        try dispatch(cluster, "primes", "loadFavoritesTapped")
        let loaded = try await state(cluster, "primes", as: Primes.State.self) { $0.favoritesLoaded }
        #expect(loaded.favorites.map(\.prime) == [3])
    }

    @Test("cluster up --mock: instant answers from the apps' mock environments, nothing written to disk")
    func mock() async throws {
        let cluster = try ClusterProcess(transport: "ipc", extraArguments: ["--mock"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let topology = try Topology.load(runDirectory: cluster.runDir)
        #expect(topology.stores.allSatisfy { $0.usesMockEnvironment })
        try dispatch(cluster, "login", "usernameChanged", #"{"username":"ada@example.com"}"#)
        try dispatch(cluster, "login", "passwordChanged", #"{"password":"analytical"}"#)
        try dispatch(cluster, "login", "loginTapped")
        let food = try await state(cluster, "food", as: Food.State.self) { !$0.rows.isEmpty }
        // The mock clock stands still at 2026-01-01T00:00Z; a live list would be dated today.
        #expect(food.rows.map(\.eaten) == ["2026-01-01 07:30", "2025-12-31 19:15", "2025-12-31 15:00"])
        #expect(food.user == "ada@example.com")
        for _ in 0..<2 { try dispatch(cluster, "primes", "incrementTapped") }
        try dispatch(cluster, "primes", "favoriteToggled")
        try dispatch(cluster, "primes", "nthPrimeTapped")
        let primes = try await state(cluster, "primes", as: Primes.State.self) { $0.alert != nil }
        #expect(primes.alert == "The 2nd prime is 3" && primes.favorites.map(\.prime) == [2])
        #expect(
            !FileManager.default.fileExists(atPath: RunDirectory(cluster.runDir).dataDirectory(of: "primes")),
            "the mock FileClient keeps files in memory")
    }

    @Test("zflux apps lists every app of the catalog with every action, in text and JSON")
    func apps() throws {
        let json = try zflux(["apps", "--json"])
        #expect(json.status == 0)
        let apps = try JSONDecoder().decode([AppDescription].self, from: Data(json.stdout.utf8))
        #expect(apps.map(\.name) == Catalog.names)
        let todo = try #require(apps.first { $0.name == "todo" })
        #expect(todo.actions.first { $0.type == "todosLoaded" }?.origin == .effect)
        #expect(apps.first { $0.name == "ledger" }?.actions.map(\.type) == ["open", "post", "close"])
        let text = try zflux(["apps"])
        for app in apps {
            #expect(text.stdout.contains("\(app.name): \(app.summary)"))
            for action in app.actions { #expect(text.stdout.contains("  \(action.type)(")) }
        }
        #expect(text.stdout.contains("zflux dispatch primes nthPrimeTapped"))
        // An action only effects send has no command line to copy: the intake would refuse it.
        #expect(!text.stdout.contains("dispatch primes nthPrimeResponse") && text.stdout.contains("sent by the app's effects only"))
    }

    @Test("a store's environment is set per store in the config, and checked")
    func configEnvironment() throws {
        let good = NSTemporaryDirectory() + "zflux-env-\(UUID().uuidString).toml"
        try "[[store]]\nname = \"todo\"\nenvironment = \"mock\"\n[[store]]\nname = \"star\"\n".write(toFile: good, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: good) }
        let checked = try zflux(["cluster", "check", good])
        #expect(checked.status == 0, "\(checked.stderr)")
        let topology = try JSONDecoder().decode(Topology.self, from: Data(checked.stdout.utf8))
        #expect(topology.stores.map(\.usesMockEnvironment) == [true, false])
        let bad = NSTemporaryDirectory() + "zflux-env-\(UUID().uuidString).toml"
        try "[[store]]\nname = \"todo\"\nenvironment = \"staging\"\n".write(toFile: bad, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: bad) }
        let refused = try zflux(["cluster", "check", bad])
        #expect(
            refused.status != 0 && refused.stderr.contains("environment 'staging' of store 'todo' is not one of: live, mock"), "\(refused.stderr)")
    }
}

import Examples
import FluxTesting
import Foundation
import Testing

/// Actions only an app's effects may send (issue 35, finding 13): a client's DISPATCH of one is
/// refused; a store's effect sends it with the cluster's effect token, and it is taken.
@Suite("Effect-only actions (real processes)", .serialized, .timeLimit(.minutes(3)))
struct EffectOriginTests {
    @Test(
        "over ipc, and over tcp on loopback without [security], `zflux dispatch login loginSucceeded` is refused with a NACK that says only the app's effects send it; the login store's own effect of loginTapped is sequenced, and the token file is private",
        arguments: ["ipc", "tcp"]
    )
    func clientsCannotSendEffectActions(transport: String) async throws {
        let dir = NSTemporaryDirectory() + "zflux-effects-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "[cluster]\ntransport = \"\(transport)\"\n[[store]]\nname = \"login\"\n".write(
            toFile: dir + "/cluster.toml", atomically: true, encoding: .utf8)
        let cluster = try ClusterProcess(transport: transport, runDir: dir + "/run", extraArguments: ["--config", dir + "/cluster.toml"])
        defer { cluster.stop() }
        try cluster.waitUntilReady()

        let forged = try cluster.zflux(["dispatch", "login", "loginSucceeded", #"{"user":"mallory"}"#])
        #expect(forged.status == 1, "\(forged.stdout)")
        #expect(forged.stderr.contains("login.loginSucceeded is sent by the app's effects only"), "\(forged.stderr)")
        // A user's actions still go through, and the effect they start is taken.
        for (action, payload) in [("usernameChanged", #"{"username":"ada@example.com"}"#), ("passwordChanged", #"{"password":"correct horse"}"#)] {
            #expect(try cluster.zflux(["dispatch", "login", action, payload]).status == 0)
        }
        #expect(try cluster.zflux(["dispatch", "login", "loginTapped"]).stdout == "3\n")
        // Seq 4 is the effect's answer; seq 5 the session's end it schedules, also an effect's dispatch.
        let state = try await waitForState(cluster, "login", version: 5, as: Login.State.self, timeout: .seconds(30))
        #expect(state.loggedInAs != nil, "the effect's answer was applied: \(state)")
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/run/effect-token")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}

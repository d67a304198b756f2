@_spi(Simulation) import FluxCore
import Foundation

/// The simulator's app with an effect: `ping(n)` asks for `pong(n)`, which its effect sends back
/// through the dispatcher. Its effect runs inline when the simulator starts it (the store core's
/// `.runEffects`), and its action is delivered at a simulated time of the simulator's choosing instead
/// of from a task, so a seed replays exactly; every run is counted, so "an effect never runs again on
/// replay" can be checked.
struct EchoApp: AnyApp {
    /// Called (on the simulator's thread) each time an effect starts: (ping id).
    let effectStarted: @Sendable (Int) -> Void

    var name: String { "echo" }
    var reads: [String] { [] }

    static func parse(_ actionType: String, _ payload: [UInt8]) throws(ActionError) -> Int {
        guard actionType == "ping" || actionType == "pong" else { throw ActionError("echo has no action '\(actionType)'") }
        guard let n = Int(String(decoding: payload, as: UTF8.self)) else { throw ActionError("echo.\(actionType) takes a number") }
        return n
    }

    func check(actionType: String, payload: [UInt8]) throws(ActionError) { _ = try EchoApp.parse(actionType, payload) }

    func admit(actionType: String, payload: [UInt8], client: UInt64, origin: ActionOrigin, host: any MiddlewareHost) throws(ActionError) -> [UInt8] {
        try check(actionType: actionType, payload: payload)
        return payload
    }

    func describe() -> AppDescription { AppDescription(name: name, summary: "the simulator's ping/pong app", reads: [], actions: []) }

    func wirePayload(type: String, argumentsJSON: [UInt8], format: WireCodec.Format) throws(ActionError) -> [UInt8] {
        try check(actionType: type, payload: argumentsJSON)
        return argumentsJSON
    }

    func makeRuntime(format: WireCodec.Format, deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) -> any AppRuntime {
        EchoRuntime(effectStarted: effectStarted, deliver: deliver)
    }

    func stateJSON(fromWire bytes: [UInt8]) throws -> [UInt8] { bytes }
    func render(wire bytes: [UInt8]) throws -> String { String(decoding: bytes, as: UTF8.self) }
    func actionJSON(fromWire bytes: [UInt8]) throws -> [UInt8] { bytes }
    func makeReplica(format: WireCodec.Format) -> any StateReplica { EchoReplica() }
}

/// pings and pongs applied, and the sum of their ids: enough for any skipped or repeated action to show.
final class EchoRuntime: AppRuntime {
    var pings = 0, pongs = 0, sum = 0
    let effectStarted: @Sendable (Int) -> Void
    let deliver: @Sendable (String, String, [UInt8]) -> Void

    init(effectStarted: @escaping @Sendable (Int) -> Void, deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) {
        self.effectStarted = effectStarted
        self.deliver = deliver
    }

    func reduce(app: String, actionType: String, payload: [UInt8], stamp: Stamp) throws(ActionError) -> PendingEffects? {
        guard app == "echo" else { return nil }
        let n = try EchoApp.parse(actionType, payload)
        guard actionType == "ping" else {
            pongs += 1
            sum &-= n
            return PendingEffects.none
        }
        pings += 1
        sum &+= n
        let (effectStarted, deliver) = (effectStarted, deliver)
        return PendingEffects(inline: {
            effectStarted(n)
            deliver("echo", "pong", payload)
        })
    }

    func apply(app: String, actionType: String, payload: [UInt8], stamp: Stamp, runEffects: Bool) throws(ActionError) -> Bool {
        guard let effects = try reduce(app: app, actionType: actionType, payload: payload, stamp: stamp) else { return false }
        if runEffects { EffectTasks().run(effects) }
        return true
    }

    func encodedState() throws -> [UInt8] { Array("\(pings),\(pongs),\(sum)".utf8) }
    func takeChanges() throws -> [UInt8]? { nil }
    func forgetChanges() {}

    func loadState(_ bytes: [UInt8]) throws {
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ",").compactMap { Int($0) }
        guard parts.count == 3 else { throw ActionError("not an echo state") }
        (pings, pongs, sum) = (parts[0], parts[1], parts[2])
    }

    func encodedSnapshot() throws -> [UInt8] { try encodedState() }
    func loadSnapshot(_ bytes: [UInt8]) throws { try loadState(bytes) }
    var effectsInFlight: Int { 0 }
    func cancelEffects() {}
}

final class EchoReplica: StateReplica {
    var state: [UInt8] = Array("0,0,0".utf8)
    func load(_ bytes: [UInt8]) throws { state = bytes }
    func apply(changes bytes: [UInt8]) throws { throw ActionError("echo publishes whole states") }
    func encodedState() throws -> [UInt8] { state }
}

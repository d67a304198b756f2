@_spi(Simulation) import FluxCore
import Foundation

/// The simulator's app with an effect: `ping(n)` asks for `pong(n)`, which its effect sends back
/// through the dispatcher. Its effect runs inline when the simulator starts it (the store core's
/// `.runEffects`), and its action is delivered at a simulated time of the simulator's choosing instead
/// of from a task, so a seed replays exactly; every run is counted, so "an effect never runs again on
/// replay" can be checked.
///
/// Some pings' effects also make a durable schedule: `tick(n)` after a delay, or at a time, under one
/// of a few ids (so that a later ping's schedule replaces a pending one), and some cancel one. Which
/// pings do, and how far ahead, follows from the ping's number and the seed's `salt` alone, so a
/// seed replays exactly and every seed draws its own.
struct EchoApp: AnyApp {
    /// Called (on the simulator's thread) each time an effect starts: (ping id).
    let effectStarted: @Sendable (Int) -> Void
    /// Mixed into each ping's number to draw what its effect asks of the schedules.
    var salt: UInt64 = 0

    /// What a ping's effect asks of the schedules besides its pong.
    enum Scheduling: Equatable {
        case none
        /// `tick(n)` under `id`, due `afterNanoseconds` after the request is sequenced, or (with
        /// `fromStamp`) at the ping's own stamp plus that much: both ways an app may say when.
        case schedule(id: String, afterNanoseconds: Int64, fromStamp: Bool)
        case cancel(id: String)
    }

    /// The ids schedules are made under: few, so replacements and cancels meet pending schedules.
    static let scheduleIDs = 4

    static func scheduling(ping n: Int, salt: UInt64) -> Scheduling {
        var draw = SplitMix64(seed: UInt64(bitPattern: Int64(n)) &* 0x9E37_79B9_7F4A_7C15 ^ salt)
        let roll = draw.next() % 100
        let id = "t\(draw.next() % UInt64(scheduleIDs))"
        switch roll {
        case 0..<40:
            // Mostly within the fault phase, some into the settling after it; now and then at once.
            let millis: UInt64 = draw.next() % 10 == 0 ? 0 : draw.next() % 2_500
            return .schedule(id: id, afterNanoseconds: Int64(millis) * 1_000_000, fromStamp: draw.next() % 4 == 0)
        case 40..<52:
            return .cancel(id: id)
        default:
            return .none
        }
    }

    static let appName = "echo"
    var name: String { EchoApp.appName }
    var reads: [String] { [] }

    static func parse(_ actionType: String, _ payload: [UInt8]) throws(ActionError) -> Int {
        guard actionType == "ping" || actionType == "pong" || actionType == "tick" else {
            throw ActionError("echo has no action '\(actionType)'")
        }
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
        EchoRuntime(effectStarted: effectStarted, salt: salt, deliver: deliver)
    }

    func stateJSON(fromWire bytes: [UInt8]) throws -> [UInt8] { bytes }
    func render(wire bytes: [UInt8]) throws -> String { String(decoding: bytes, as: UTF8.self) }
    func actionJSON(fromWire bytes: [UInt8]) throws -> [UInt8] { bytes }
    func makeReplica(format: WireCodec.Format) -> any StateReplica { EchoReplica() }
}

/// pings, pongs and ticks applied, and the sums of their ids: enough for any skipped or repeated
/// action to show.
final class EchoRuntime: AppRuntime {
    var pings = 0, pongs = 0, sum = 0, ticks = 0, tickSum = 0
    let effectStarted: @Sendable (Int) -> Void
    let salt: UInt64
    let deliver: @Sendable (String, String, [UInt8]) -> Void

    init(effectStarted: @escaping @Sendable (Int) -> Void, salt: UInt64, deliver: @escaping @Sendable (String, String, [UInt8]) -> Void) {
        self.effectStarted = effectStarted
        self.salt = salt
        self.deliver = deliver
    }

    func reduce(app: String, actionType: String, payload: [UInt8], stamp: Stamp) throws(ActionError) -> PendingEffects? {
        guard app == "echo" else { return nil }
        let n = try EchoApp.parse(actionType, payload)
        switch actionType {
        case "pong":
            pongs += 1
            sum &-= n
            return PendingEffects.none
        case "tick":
            ticks += 1
            tickSum &+= n
            return PendingEffects.none
        default:
            break
        }
        pings += 1
        sum &+= n
        let (effectStarted, deliver) = (effectStarted, deliver)
        let request = EchoRuntime.scheduleRequest(ping: n, salt: salt, stamp: stamp)
        return PendingEffects(inline: {
            effectStarted(n)
            deliver("echo", "pong", payload)
            // As `send.schedule` and `send.cancelSchedule` do: a DISPATCH on the reserved topic.
            if let (type, body) = request { deliver(Schedules.topic, type, body) }
        })
    }

    /// The request ping `n`'s effect sends on ``Schedules/topic``, if any: its type and payload.
    static func scheduleRequest(ping n: Int, salt: UInt64, stamp: Stamp) -> (String, [UInt8])? {
        let codec = WireCodec()
        switch EchoApp.scheduling(ping: n, salt: salt) {
        case .none:
            return nil
        case .schedule(let id, let after, let fromStamp):
            var request = ScheduleRequest(id: id, app: "echo", type: "tick", payload: Array("\(n)".utf8))
            if fromStamp {
                request.atNanoseconds = Int64((stamp.time.timeIntervalSince1970 * 1e9).rounded()) + after
            } else {
                request.afterNanoseconds = after
            }
            return (try? codec.encode(request)).map { (Schedules.scheduleType, $0) }
        case .cancel(let id):
            return (try? codec.encode(ScheduleCancel(app: "echo", id: id))).map { (Schedules.cancelType, $0) }
        }
    }

    func apply(app: String, actionType: String, payload: [UInt8], stamp: Stamp, runEffects: Bool) throws(ActionError) -> Bool {
        guard let effects = try reduce(app: app, actionType: actionType, payload: payload, stamp: stamp) else { return false }
        if runEffects { EffectTasks().run(effects) }
        return true
    }

    func encodedState() throws -> [UInt8] { Array("\(pings),\(pongs),\(sum),\(ticks),\(tickSum)".utf8) }
    func takeChanges() throws -> [UInt8]? { nil }
    func forgetChanges() {}

    func loadState(_ bytes: [UInt8]) throws {
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ",").compactMap { Int($0) }
        guard parts.count == 5 else { throw ActionError("not an echo state") }
        (pings, pongs, sum, ticks, tickSum) = (parts[0], parts[1], parts[2], parts[3], parts[4])
    }

    func encodedSnapshot() throws -> [UInt8] { try encodedState() }
    func loadSnapshot(_ bytes: [UInt8]) throws { try loadState(bytes) }
    var effectsInFlight: Int { 0 }
    func cancelEffects() {}
}

final class EchoReplica: StateReplica {
    var state: [UInt8] = Array("0,0,0,0,0".utf8)
    func load(_ bytes: [UInt8]) throws { state = bytes }
    func apply(changes bytes: [UInt8]) throws { throw ActionError("echo publishes whole states") }
    func encodedState() throws -> [UInt8] { state }
}

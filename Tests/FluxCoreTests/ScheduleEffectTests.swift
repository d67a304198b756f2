import Examples
import Foundation
import Synchronization
import Testing

@testable import FluxCore

/// What a store's runtime sends the dispatcher for the schedule orders its reducer returns.
@Suite("Schedule orders from a reducer")
struct ScheduleEffectTests {
    /// The requests a runtime delivered, as (topic, type, payload).
    final class Delivered: Sendable {
        let all = Mutex<[(String, String, [UInt8])]>([])
    }

    static func stamp(seq: UInt64, seconds: Double) -> Stamp { Stamp(seq: seq, time: Date(timeIntervalSince1970: seconds)) }

    @Test("a delay counts from the stamp of the action that asked, and the orders of successive actions go out in their order, at once")
    func anchoredAndOrdered() throws {
        let delivered = Delivered()
        let runtime = Login.app(environment: .mock(.success("Ada"))).makeRuntime(format: .binary) { topic, type, payload in
            delivered.all.withLock { $0.append((topic, type, payload)) }
        }
        let success = try WireCodec().encode(Login.Action.loginSucceeded(user: "Ada"))
        let logout = try WireCodec().encode(Login.Action.logoutTapped)
        // Applied with effects, as a store applies a live action: the orders are handed over during the call.
        _ = try runtime.apply(
            app: "login", actionType: "loginSucceeded", payload: success, stamp: Self.stamp(seq: 4, seconds: 1_800_000_000), runEffects: true)
        _ = try runtime.apply(
            app: "login", actionType: "logoutTapped", payload: logout, stamp: Self.stamp(seq: 5, seconds: 1_800_000_001), runEffects: true)
        let sent = delivered.all.withLock { $0 }
        #expect(sent.map(\.0) == [Schedules.topic, Schedules.topic])
        #expect(sent.map(\.1) == [Schedules.scheduleType, Schedules.cancelType], "the cancel after the schedule it cancels")
        let request = try WireCodec().decode(ScheduleRequest.self, from: sent[0].2)
        #expect(request.atNanoseconds == 1_800_000_060 * 1_000_000_000 && request.afterNanoseconds == nil, "the stamp plus a minute")
        #expect(request.app == "login" && request.type == "sessionExpired" && request.id == Login.sessionScheduleID)
        #expect(try WireCodec().decode(ScheduleCancel.self, from: sent[1].2) == ScheduleCancel(app: "login", id: Login.sessionScheduleID))
    }

    @Test("a time past what 64 bits of nanoseconds hold is clamped, for the dispatcher to refuse, instead of trapping the store")
    func extremeTimes() throws {
        for order in [
            ScheduleOrder<Counter.Action>.schedule(id: "far", action: .incrementTapped, when: .at(.distantFuture)),
            .schedule(id: "long", action: .incrementTapped, when: .after(.seconds(Int64.max))),
        ] {
            let (type, payload) = try type(of: Counter.app()).scheduleRequest(order, app: "counter", codec: WireCodec())
            let request = try WireCodec().decode(ScheduleRequest.self, from: payload)
            #expect(type == Schedules.scheduleType)
            #expect((request.atNanoseconds ?? 0) > 9_000_000_000_000_000_000 || request.afterNanoseconds == Int64.max)
        }
    }
}

import Foundation
import Testing

/// Heap allocations per action through the dispatcher's core and a store's core (issue 36), counted by
/// `zflux-allocations`, whose allocator stands in for glibc's. The counts are exact and the same on
/// every run of one build, so a limit just above today's catches an allocation added to the path of
/// every action. When a change removes some, lower the limit with it; when one must add some, say why
/// in BENCHMARKS.md and raise it there and here together.
@Suite("Allocations per action")
struct AllocationTests {
    /// Today's counts (debug and release builds differ), each with room for less than one more.
    static let limits: [String: (dispatcher: Double, unvalidated: Double, batched: Double, store: Double)] = [
        // Debug rose by 0.7 with the dedup table's per-owner accounting (BENCHMARKS.md, 2026-11-29).
        "debug": (dispatcher: 17, unvalidated: 16, batched: 15, store: 6.5),
        "release": (dispatcher: 2, unvalidated: 2, batched: 1, store: 2),
    ]

    @Test("the dispatcher's core and a store's core allocate no more per action than recorded")
    func perAction() throws {
        let program = (zfluxBinary as NSString).deletingLastPathComponent + "/zflux-allocations"
        let result = try runProgram(program, ["5000"], timeout: .seconds(120))
        try #require(result.status == 0, "zflux-allocations: \(result.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "not a JSON object: \(result.stdout)")
        let build = try #require(report["build"] as? String)
        let limit = try #require(AllocationTests.limits[build], "no limits for a \(build) build")
        let dispatcher = try #require(report["dispatcher_per_action"] as? Double)
        let store = try #require(report["store_per_action"] as? Double)
        // Something was counted: a counter that counts nothing would pass any limit.
        #expect(dispatcher > 1 && store > 1, "\(result.stdout)")
        #expect(dispatcher <= limit.dispatcher, "the dispatcher's core allocates \(dispatcher) times per action (\(build) limit \(limit.dispatcher))")
        #expect(store <= limit.store, "a store's core allocates \(store) times per action (\(build) limit \(limit.store))")
        // An app with neither validate nor middleware: its payloads are checked in place, not decoded,
        // so its actions cost the dispatcher no more allocations than the ledger's, which are decoded
        // (fewer in a debug build; in a release build the ledger's decode allocates nothing either, and
        // the two differ by a few allocations of the tables' growth in all).
        let unvalidated = try #require(report["dispatcher_unvalidated_per_action"] as? Double)
        #expect(unvalidated > 1 && unvalidated <= dispatcher + 0.01, "\(result.stdout)")
        #expect(
            unvalidated <= limit.unvalidated,
            "the dispatcher's core allocates \(unvalidated) times per unvalidated action (\(build) limit \(limit.unvalidated))")
        // The same actions in DISPATCH-BATCHes: admitted where they lie in the batch, with no message
        // and no payload copy of their own, so no more than sent alone (whose topic array the driver builds).
        let batched = try #require(report["dispatcher_batched_per_action"] as? Double)
        #expect(batched > 0.5 && batched <= unvalidated, "\(result.stdout)")
        #expect(batched <= limit.batched, "the dispatcher's core allocates \(batched) times per batched action (\(build) limit \(limit.batched))")
    }
}

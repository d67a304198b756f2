/// What a dispatcher's journal may let go of, decided from its segments and from what its readers
/// still need (``Need``): the rule the dispatcher runs by itself at each segment roll when
/// `[journal] retain_mb` is set.
///
/// Only whole segments go, oldest first, never the newest; only while the journal is over its budget;
/// and never a segment holding a seq some reader still needs: a store's snapshot (it catches up from
/// the records after its version), the standby (from the records after what it holds), the older of
/// the two checkpoints (a start that finds the newest damaged reads the records after the older one).
/// When a need holds segments back, the plan says which.
package enum JournalRetention {
    /// One segment: the seqs it holds and its size on disk.
    package struct Segment: Equatable, Sendable {
        package var firstSeq: UInt64
        package var lastSeq: UInt64
        package var bytes: Int
        package init(firstSeq: UInt64, lastSeq: UInt64, bytes: Int) { (self.firstSeq, self.lastSeq, self.bytes) = (firstSeq, lastSeq, bytes) }
    }

    /// A reader that needs every record from `from` on, and who it is.
    package struct Need: Equatable, Sendable {
        package var from: UInt64
        package var who: String
        package init(from: UInt64, who: String) { (self.from, self.who) = (from, who) }
    }

    /// How many of the oldest segments go, the bytes they free, and what kept others the budget
    /// would have let go (nil when nothing did).
    package struct Plan: Equatable, Sendable {
        package var remove: Int
        package var freedBytes: Int
        package var keptFor: Need?
    }

    /// The plan for `segments` (oldest first, each starting just after the one before) under a budget
    /// of `maxBytes` on disk, given what `needs` hold on to.
    package static func plan(segments: [Segment], maxBytes: Int, needs: [Need]) -> Plan {
        for (earlier, later) in zip(segments, segments.dropFirst()) {
            precondition(later.firstSeq == earlier.lastSeq + 1, "segments follow one another: \(earlier.lastSeq) then \(later.firstSeq)")
        }
        precondition(maxBytes > 0, "a retention budget is positive")
        var total = segments.reduce(0) { $0 + $1.bytes }
        // What the budget alone lets go: the oldest sealed segments, until the rest fits.
        var wanted = 0
        while wanted < segments.count - 1 && total > maxBytes {
            total -= segments[wanted].bytes
            wanted += 1
        }
        let neediest = needs.min { $0.from < $1.from }
        var allowed = wanted
        if let neediest {
            allowed = segments.prefix(wanted).prefix { $0.lastSeq < neediest.from }.count
        }
        let freed = segments.prefix(allowed).reduce(0) { $0 + $1.bytes }
        let plan = Plan(remove: allowed, freedBytes: freed, keptFor: allowed < wanted ? neediest : nil)
        assert(plan.remove <= max(segments.count - 1, 0), "the newest segment always stays")
        assert(neediest.map { need in segments.prefix(plan.remove).allSatisfy { $0.lastSeq < need.from } } ?? true, "nothing a reader needs goes")
        return plan
    }
}

/// What a standby's retention (`[journal] retain_mb`) last did to its own journal, carried in the
/// payload of its REPLICA-ACKs so that the leader's status (and `zflux top`) shows it: the standby
/// answers no STATUS of its own. The payload is the journal's first seq (u64, little-endian) and then
/// the note, UTF-8. A leader of an earlier version ignores an ACK's payload; an ACK with none (a
/// standby of an earlier version, or retention off) reports nothing.
package struct RetentionReport: Equatable, Sendable {
    /// The oldest seq the standby's journal holds.
    package var journalFirstSeq: UInt64
    /// What retention last did or held back, and for whom.
    package var note: String

    package init(journalFirstSeq: UInt64, note: String) {
        precondition(journalFirstSeq >= 1, "seqs start at 1")
        (self.journalFirstSeq, self.note) = (journalFirstSeq, note)
    }

    /// The most bytes of note carried: an ACK stays small.
    static let maxNoteBytes = 512

    package var encoded: [UInt8] {
        var bytes = withUnsafeBytes(of: journalFirstSeq.littleEndian, Array.init)
        bytes += note.utf8.prefix(RetentionReport.maxNoteBytes)
        assert(bytes.count >= 8 && bytes.count <= 8 + RetentionReport.maxNoteBytes, "a report is a seq and a short note")
        return bytes
    }

    /// The report in an ACK's payload; nil for none (or one too short to be one).
    package init?(payload: [UInt8]) {
        guard payload.count >= 8 else { return nil }
        let first = payload.prefix(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard first >= 1 else { return nil }
        self.init(journalFirstSeq: first, note: String(decoding: payload.dropFirst(8).prefix(RetentionReport.maxNoteBytes), as: UTF8.self))
    }
}

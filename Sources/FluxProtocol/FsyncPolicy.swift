/// When the dispatcher's journal forces what it wrote to the disk, before anything is published or
/// acknowledged (rule 6 of docs/ARCHITECTURE.md; docs/GUARANTEES.md says what survives which fault under each).
public enum FsyncPolicy: String, Sendable, CaseIterable, Codable {
    /// fsync after every record, before its ACK.
    case always
    /// one fsync per drained batch of records (group commit), before their ACKs.
    case batch
    /// never fsync: ACKed once written to the OS (survives a process crash, not a power cut).
    case none
}

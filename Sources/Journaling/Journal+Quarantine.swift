import FluxCore
import Foundation

extension Journal {
    /// The actions every store skips because they crashed a reducer (`QUARANTINE`, JSON, beside the
    /// segments); none when there is no file.
    public func quarantine() throws -> [Quarantine] {
        guard let bytes = storage.contentsIfAny(directory + "/QUARANTINE") else { return [] }
        do {
            return try JSONDecoder().decode([Quarantine].self, from: Data(bytes))
        } catch {
            throw JournalError("\(directory)/QUARANTINE is not a quarantine list: \(error)")
        }
    }

    /// Replaces `QUARANTINE` whole with `entries`, durably.
    public func keepQuarantine(_ entries: [Quarantine]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(entries.sorted { $0.seq < $1.seq })
        try storage.writeWhole(Array(data), to: directory + "/QUARANTINE")
        try syncDirectory()
    }
}

import FluxCore

/// What a dispatcher's start would otherwise read its whole log for, as it stood at one seq: the
/// schedule book (``ScheduleBook``), which follows from every schedule request, cancel and fire since
/// the log began. Kept beside the log (``ActionLog/writeCheckpoint(seq:bytes:)``), so that a start reads
/// the newest valid checkpoint and then the log after it, in a time that does not grow with the log.
///
/// The rest of what a start rebuilds needs no checkpoint: the dedup table reads only the newest
/// ``DispatcherCore/dedupRecoveryRecords`` records, and the quarantine list, the client scope and the
/// history have small files of their own beside the log.
///
/// It names the record it covers through (its seq, and that record's stamp and client): a log whose
/// record at that seq is another one (a tail lost in a power cut under `fsync none`, then sequenced
/// again) does not match, and the start reads the whole log instead.
package struct DispatcherCheckpoint: Codable, Equatable, Sendable {
    /// The newest seq it covers: the book holds what the log's records up to it made.
    package var seq: UInt64
    /// The record at `seq`: its stamp, client and client seq (zeros for seq 0).
    package var anchor: Anchor
    package var schedules: [ScheduleBook.Entry]
    package var fired: UInt64
    package var cancelled: UInt64
    package var late: UInt64

    package struct Anchor: Codable, Equatable, Sendable {
        package var timestamp: Int64
        package var clientID: UInt64
        package var clientSeq: UInt64

        package init(_ header: Header) { (timestamp, clientID, clientSeq) = (header.timestamp, header.clientID, header.clientSeq) }
        package init(timestamp: Int64, clientID: UInt64, clientSeq: UInt64) {
            (self.timestamp, self.clientID, self.clientSeq) = (timestamp, clientID, clientSeq)
        }
    }

    package init(seq: UInt64, anchor: Anchor, book: ScheduleBook) {
        self.seq = seq
        self.anchor = anchor
        self.schedules = book.pending()
        (fired, cancelled, late) = (book.fired, book.cancelled, book.late)
    }

    /// The book it holds, bounded by `maxPendingBytes` as the intake's is.
    package func book(maxPendingBytes: Int) -> ScheduleBook {
        ScheduleBook(restoring: schedules, fired: fired, cancelled: cancelled, late: late, maxPendingBytes: maxPendingBytes)
    }

    /// The file's first bytes: its kind and format version.
    static let magic: [UInt8] = Array("ZFXCKPT1".utf8)

    /// `magic`, the body's length and CRC-32 (little-endian u32 each), then the body (``WireCodec``).
    package func encoded() throws -> [UInt8] {
        let body = try WireCodec().encode(self)
        var bytes = DispatcherCheckpoint.magic
        bytes.reserveCapacity(bytes.count + 8 + body.count)
        bytes.appendLittleEndian(UInt32(body.count))
        bytes.appendLittleEndian(CRC32.checksum(body))
        bytes.append(contentsOf: body)
        return bytes
    }

    /// What a checkpoint file holds, or why it cannot be used (torn, damaged, or of another format).
    package static func decode(_ bytes: [UInt8]) -> Result<DispatcherCheckpoint, CheckpointError> {
        let head = magic.count + 8
        guard bytes.count >= head, Array(bytes[0..<magic.count]) == magic else {
            return .failure(
                CheckpointError(bytes.count < head ? "it is shorter than its header (torn)" : "it is not a zflux checkpoint of a known version"))
        }
        let length = Int(bytes.readLittleEndian(UInt32.self, at: magic.count))
        let expected = bytes.readLittleEndian(UInt32.self, at: magic.count + 4)
        guard bytes.count == head + length else {
            return .failure(CheckpointError("it holds \(bytes.count - head) bytes of a \(length)-byte body (torn)"))
        }
        let body = bytes[head...]
        guard CRC32.checksum(body) == expected else { return .failure(CheckpointError("its checksum does not match (damaged)")) }
        guard let checkpoint = try? WireCodec().decode(DispatcherCheckpoint.self, from: Array(body)) else {
            return .failure(CheckpointError("its body does not decode"))
        }
        // Its own file, checked by its checksum; still, a book that holds an id twice is not taken.
        guard Set(checkpoint.schedules.map { [$0.app, $0.id] }).count == checkpoint.schedules.count else {
            return .failure(CheckpointError("it holds a schedule twice"))
        }
        return .success(checkpoint)
    }
}

/// Why a checkpoint was not used.
package struct CheckpointError: Error, Equatable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

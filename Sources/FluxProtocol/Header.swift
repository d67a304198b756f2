/// The fixed binary header carried in the second frame of every message (docs/PROTOCOL.md).
///
/// Layout, all integers little-endian:
/// ```
/// offset size field
///      0    2 magic "ZF" (0x5A 0x46)
///      2    1 protocol version (`Header.protocolVersion`, 3, for the kinds protocol 3 added; 2 otherwise)
///      3    1 message kind
///      4    2 flags
///      6    2 action type length in bytes (n, at most 255)
///      8    8 seq
///     16    8 ref
///     24    8 client id
///     32    8 client seq
///     40    8 timestamp, nanoseconds since the Unix epoch
///     48    8 history: the journal's cluster id (high 24 bits) and epoch (low 40 bits); 0 = not stamped
///     56    n action type, ASCII letters, digits and '_'
/// ```
/// A reader takes versions 1 to 3. Version 1 headers (no history field, the action type at 48) are
/// still read, with history 0.
public struct Header: Equatable, Sendable {
    public static let magic: (UInt8, UInt8) = (0x5A, 0x46)
    public static let protocolVersion: UInt8 = 3
    public static let fixedSize = 56
    /// Version 1 had no history field.
    public static let fixedSizeVersion1 = 48
    public static let maxActionTypeLength = 255

    /// Where each fixed field starts in the header's bytes (the layout above): the one place the offsets
    /// are written. The header's coder and the readers that take one field from a journal record without
    /// decoding it (``JournalRecord``, ``Schedules``) all use these.
    package enum Offset {
        package static let magic = 0
        package static let version = 2
        package static let kind = 3
        package static let flags = 4
        package static let actionTypeLength = 6
        package static let seq = 8
        package static let ref = 16
        package static let clientID = 24
        package static let clientSeq = 32
        package static let timestamp = 40
        /// Absent from a version-1 header, whose action type starts here.
        package static let history = 48
    }

    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        /// STATE / SNAPSHOT: the payload is the whole state (not a change).
        public static let fullState = Flags(rawValue: 1 << 0)
        /// HEARTBEAT from a store: the store is still catching up with the dispatcher.
        public static let catchingUp = Flags(rawValue: 1 << 1)
        /// REPLAY-END: the journal no longer holds the seqs asked for; it starts at `ref`.
        public static let historyTruncated = Flags(rawValue: 1 << 2)
        /// STATE / SNAPSHOT: the payload is one part of a larger one (``MessageParts``).
        public static let part = Flags(rawValue: 1 << 3)
        /// NACK: refused for now (rate limited); the same action may be sent again later.
        public static let retryLater = Flags(rawValue: 1 << 4)
        /// DISPATCH: the client reads ACK-BATCH, so its ACKs may come several to a message.
        public static let batchReplies = Flags(rawValue: 1 << 5)
        /// NACK: this dispatcher does not lead (it stepped down, or is a standby): send to the leader.
        public static let notLeader = Flags(rawValue: 1 << 6)
        /// ACTION in a replay: quarantined (it crashed a store's reducer): its payload is gone, and every
        /// store skips it, its version advancing with its state unchanged. REJECTED: the store skipped
        /// the action as quarantined (its reducer did not refuse it).
        public static let quarantined = Flags(rawValue: 1 << 7)
        /// ACTION: fired by a schedule (``Schedules``): `ref` holds the time it was due (nanoseconds
        /// since the Unix epoch) and `clientSeq` the seq of the request that made the schedule. Only the
        /// dispatcher sets it.
        package static let scheduled = Flags(rawValue: 1 << 8)
        /// ACTION on ``Schedules/topic``, a schedule request: an app's effect made it (its DISPATCH carried
        /// the effect token), so it counts in the share of the pending schedules kept for effects. Only
        /// the dispatcher sets it.
        package static let byEffect = Flags(rawValue: 1 << 9)
    }

    public var kind: MessageKind
    public var flags: Flags
    /// ACTION, ACK, replay: the global sequence number. STATE, SNAPSHOT, store HEARTBEAT: the version.
    /// (docs/PROTOCOL.md, "seq and ref, kind by kind", has every kind.)
    public var seq: UInt64
    /// A second number whose meaning depends on the kind, among them: STATE, the version the update
    /// follows; store HEARTBEAT, the version the store has applied; REPLAY-REQUEST, the last seq wanted
    /// (0 = up to the newest); REPLAY-BATCH, the batch's last seq; REPLAY-END, the last seq sent.
    /// docs/PROTOCOL.md ("seq and ref, kind by kind") gives every kind's.
    public var ref: UInt64
    public var clientID: UInt64
    public var clientSeq: UInt64
    /// Nanoseconds since the Unix epoch; stamped by the dispatcher on ACTION.
    public var timestamp: Int64
    /// The action's case name (DISPATCH, ACTION); empty for other kinds.
    public var actionType: String
    /// Which history the message belongs to (ACTION, dispatcher HEARTBEAT, REPLAY-BATCH/END, STATE,
    /// SNAPSHOT): ``HistoryID``'s raw value, 0 when not stamped.
    public var history: UInt64

    public init(
        kind: MessageKind, flags: Flags = [], seq: UInt64 = 0, ref: UInt64 = 0, clientID: UInt64 = 0,
        clientSeq: UInt64 = 0, timestamp: Int64 = 0, actionType: String = "", history: UInt64 = 0
    ) {
        self.kind = kind
        self.flags = flags
        self.seq = seq
        self.ref = ref
        self.clientID = clientID
        self.clientSeq = clientSeq
        self.timestamp = timestamp
        self.actionType = actionType
        self.history = history
    }

    /// True for a non-empty name of ASCII letters, digits and '_' that starts with a letter or '_',
    /// at most 255 bytes: the names Swift enum cases can have, and safe to splice into JSON.
    public static func isValidActionType(_ name: some Collection<UInt8>) -> Bool {
        let bytes = Array(name)
        return isValidActionType(bytes, in: bytes.indices)
    }

    /// ``isValidActionType(_:)`` of the bytes in `range` of `bytes`, by a plain loop (a generic one
    /// over the collection allocated about twenty times a call in a debug build, and every header
    /// decoded asks it).
    package static func isValidActionType(_ bytes: [UInt8], in range: Range<Int>) -> Bool {
        guard !range.isEmpty, range.count <= maxActionTypeLength else { return false }
        for index in range {
            let c = bytes[index]
            let letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95
            guard letter || (index > range.lowerBound && c >= 48 && c <= 57) else { return false }
        }
        return true
    }
}

import FluxCore
import Foundation

/// A recorded stretch of a cluster's history, self-contained, to send as a bug report (`zflux journal
/// export`): every store's state just before `from`, the actions `from…to` with their seqs, apps,
/// clients and times, and what each action made of the stores' states. `zflux journal import` turns it
/// into a run directory whose cluster reproduces those states bit for bit, and FluxClusterTesting's
/// `Session.verify(apps:)` checks that the reducers still reproduce every recorded state.
///
/// The file is JSON. Wire bytes (payloads, snapshots) are base64 so that they come back exactly;
/// beside them each action's arguments and each state are plain JSON, for reading.
public struct Session: Codable, Sendable, Equatable {
    public static let formatName = "zflux-session/1"

    public var format = Session.formatName
    /// The first and last seq of the recorded actions.
    public var from: UInt64
    public var to: UInt64
    /// The codec the cluster wrote states and payloads in.
    public var codec: WireCodec.Format
    public var stores: [Store]
    /// The action at `from - 1` (nil when `from` is 1): a journal imported from the session starts
    /// with it, so that stores resuming from their states at `from - 1` can check where they stand.
    public var anchor: Action?
    public var actions: [Action]

    public struct Store: Codable, Sendable, Equatable {
        public var name: String
        public var app: String
        /// The store's version and state before `from`: its snapshot bytes (what a store resumes from)
        /// and the state as JSON.
        public var version: UInt64
        public var snapshot: Data
        public var state: JSONValue

        public init(name: String, app: String, version: UInt64, snapshot: Data, state: JSONValue) {
            self.name = name
            self.app = app
            self.version = version
            self.snapshot = snapshot
            self.state = state
        }
    }

    public struct Action: Codable, Sendable, Equatable {
        public var seq: UInt64
        public var app: String
        public var type: String
        public var client: UInt64
        public var clientSeq: UInt64
        /// When the dispatcher sequenced it, in nanoseconds since 1970 (what reducers see), and the
        /// same as ISO 8601, for reading.
        public var timeNanoseconds: Int64
        public var time: String
        /// The payload as it was on the wire.
        public var wire: Data
        /// The arguments as JSON (null when the app could not read them).
        public var payload: JSONValue
        /// The stores whose state this action changed, with their states after it.
        public var changed: [String: JSONValue]
        /// For an action a schedule fired: when it was due, and the seq of its request (absent otherwise).
        var scheduled: Scheduled?

        struct Scheduled: Codable, Sendable, Equatable {
            var dueNanoseconds: Int64
            var requestSeq: UInt64

            enum CodingKeys: String, CodingKey {
                case dueNanoseconds = "due_ns"
                case requestSeq = "request_seq"
            }
        }

        enum CodingKeys: String, CodingKey {
            case seq, app, type, client, time, wire, payload, changed, scheduled
            case clientSeq = "client_seq"
            case timeNanoseconds = "time_ns"
        }

        public init(_ message: Message, payload: JSONValue, changed: [String: JSONValue]) {
            seq = message.header.seq
            app = message.topicString
            type = message.header.actionType
            client = message.header.clientID
            clientSeq = message.header.clientSeq
            timeNanoseconds = message.header.timestamp
            time = Session.isoTime(message.header.timestamp)
            wire = Data(message.payload)
            self.payload = payload
            self.changed = changed
            if message.header.flags.contains(.scheduled) {
                scheduled = Scheduled(dueNanoseconds: Int64(bitPattern: message.header.ref), requestSeq: message.header.clientSeq)
            }
        }

        /// The ACTION as the dispatcher published it, stamped with `history`: a scheduled one with its
        /// flag and due time, so its reducer sees the same stamp.
        public func message(history: UInt64) -> Message {
            Message(
                topic: app,
                header: Header(
                    kind: .action, flags: scheduled == nil ? [] : .scheduled, seq: seq,
                    ref: scheduled.map { UInt64(bitPattern: $0.dueNanoseconds) } ?? 0, clientID: client, clientSeq: clientSeq,
                    timestamp: timeNanoseconds, actionType: type, history: history),
                payload: [UInt8](wire))
        }
    }

    public init(from: UInt64, to: UInt64, codec: WireCodec.Format, stores: [Store], anchor: Action?, actions: [Action]) {
        self.from = from
        self.to = to
        self.codec = codec
        self.stores = stores
        self.anchor = anchor
        self.actions = actions
    }

    /// Reads a session file, checking that it is one and that its actions are in order.
    public static func load(_ path: String) throws -> Session {
        guard let data = FileManager.default.contents(atPath: path) else { throw RewindError("cannot read \(path)") }
        return try decode(data, source: path)
    }

    /// A session from a file's bytes (`source` names the file in errors), with the same checks as `load`.
    public static func decode(_ data: Data, source: String) throws -> Session {
        let session: Session
        do {
            session = try JSONDecoder().decode(Session.self, from: data)
        } catch {
            throw RewindError("\(source) is not a zflux session file: \(error)")
        }
        guard session.format == formatName else {
            throw RewindError("\(source) is a session of format '\(session.format)'; this zflux reads '\(formatName)'")
        }
        // Read from someone else's file: every seq is compared without arithmetic that can overflow and
        // without building the range the file claims (`to` may be 2^64 - 1).
        let (from, to) = (session.from, session.to)
        guard from >= 1, from <= to, !session.actions.isEmpty, to - from == UInt64(session.actions.count - 1),
            session.actions.enumerated().allSatisfy({ index, action in action.seq == from + UInt64(index) }),
            session.anchor.map({ $0.seq == from - 1 }) ?? (from == 1)
        else {
            throw RewindError("\(source) does not hold the actions \(session.from)…\(session.to) in order")
        }
        return session
    }

    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    static func isoTime(_ nanoseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(nanoseconds) / 1e9))
    }
}

/// Why time travel, a session or an import could not be done; the description says it for people.
public struct RewindError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

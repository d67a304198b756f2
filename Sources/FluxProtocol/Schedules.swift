import Foundation

/// Scheduled actions on the wire: the requests that make and cancel a schedule, and what a fired
/// action carries (docs/PROTOCOL.md, "Scheduled actions").
///
/// A request is a DISPATCH like any other, on the reserved topic ``topic`` (no app can have the name:
/// app names have no '.'), of type ``scheduleType`` or ``cancelType``. The dispatcher sequences and
/// journals it, so the journal alone says which schedules are pending. When one is due the dispatcher
/// sequences its action as a new ACTION of the target app, with the `scheduled` flag, the due time in
/// `ref` and the request's seq in `clientSeq`.
package enum Schedules {
    /// The topic of schedule requests.
    package static let topic = "zflux.schedule"
    /// The action type of a request that makes (or replaces) a schedule: payload ``ScheduleRequest``.
    package static let scheduleType = "schedule"
    /// The action type of a request that cancels one: payload ``ScheduleCancel``.
    package static let cancelType = "cancel"
    /// The longest schedule id, in bytes.
    package static let maxIDBytes = 200
    /// The furthest a schedule may lie ahead: ten years, in nanoseconds.
    package static let maxDelayNanoseconds: Int64 = 10 * 366 * 86_400 * 1_000_000_000

    /// Whether `topic` is the reserved one.
    package static func isScheduling(topic: some Collection<UInt8>) -> Bool { topic.elementsEqual(topicBytes) }

    /// ``isScheduling(topic:)`` of the bytes in `range` of `bytes`, by a plain loop: the intake asks it of
    /// every DISPATCH, and a generic comparison allocates in a debug build.
    package static func isScheduling(_ bytes: [UInt8], in range: Range<Int>) -> Bool {
        guard range.count == topicBytes.count else { return false }
        for (offset, index) in range.enumerated() where bytes[index] != topicBytes[offset] { return false }
        return true
    }
    static let topicBytes = Array(topic.utf8)

    /// Whether the journal record whose body is `body` makes, cancels or fires a schedule: what a
    /// dispatcher reads again when it opens its journal. Read from the topic and the header's flags,
    /// without decoding the record.
    package static func concernsSchedules(recordBody body: UnsafeRawBufferPointer) -> Bool {
        guard let header = JournalRecord.headerOffset(inBody: body) else { return false }
        let topicLength = header - 8
        if topicLength == topicBytes.count, UnsafeRawBufferPointer(rebasing: body[4..<(4 + topicLength)]).elementsEqual(topicBytes) {
            return true
        }
        let flags = body.readLittleEndian(UInt16.self, at: header + Header.Offset.flags)
        return Header.Flags(rawValue: flags).contains(.scheduled)
    }
}

/// The payload of a DISPATCH of type `schedule` on ``Schedules/topic``: dispatch `type` of `app`,
/// with `payload`, at a wall-clock time or after a delay, under `id`. A second request with the same
/// app and id replaces the first while it is pending.
package struct ScheduleRequest: Codable, Equatable, Sendable {
    package var id: String
    package var app: String
    package var type: String
    /// The action's payload, in either codec, as the app's own DISPATCH would carry it (base64 on the wire).
    package var payload: [UInt8]
    /// When it is due, in nanoseconds since the Unix epoch; or nil, with ``afterNanoseconds``.
    package var atNanoseconds: Int64?
    /// How long after the request is sequenced it is due (from the request's stamp, so replaying the
    /// journal finds the same due time).
    package var afterNanoseconds: Int64?

    private enum CodingKeys: String, CodingKey { case id, app, type, payload, atNanoseconds, afterNanoseconds }

    /// The action's payload travels as base64 text: an array of bytes would take two bytes a byte in
    /// the binary codec, and more in JSON.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        app = try container.decode(String.self, forKey: .app)
        type = try container.decode(String.self, forKey: .type)
        guard let bytes = Data(base64Encoded: try container.decode(String.self, forKey: .payload)) else {
            throw DecodingError.dataCorruptedError(forKey: .payload, in: container, debugDescription: "the payload is not base64")
        }
        payload = [UInt8](bytes)
        atNanoseconds = try container.decodeIfPresent(Int64.self, forKey: .atNanoseconds)
        afterNanoseconds = try container.decodeIfPresent(Int64.self, forKey: .afterNanoseconds)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(app, forKey: .app)
        try container.encode(type, forKey: .type)
        try container.encode(Data(payload).base64EncodedString(), forKey: .payload)
        try container.encodeIfPresent(atNanoseconds, forKey: .atNanoseconds)
        try container.encodeIfPresent(afterNanoseconds, forKey: .afterNanoseconds)
    }

    package init(id: String, app: String, type: String, payload: [UInt8], atNanoseconds: Int64? = nil, afterNanoseconds: Int64? = nil) {
        self.id = id
        self.app = app
        self.type = type
        self.payload = payload
        self.atNanoseconds = atNanoseconds
        self.afterNanoseconds = afterNanoseconds
    }

    /// The due time of this request sequenced at `stamped` (nanoseconds since the Unix epoch).
    package func due(stampedAt stamped: Int64) -> Int64 {
        atNanoseconds ?? stamped.addingReportingOverflow(afterNanoseconds ?? 0).partialValue
    }
}

/// The payload of a DISPATCH of type `cancel` on ``Schedules/topic``.
package struct ScheduleCancel: Codable, Equatable, Sendable {
    /// The app whose schedule it is: ids are each app's own.
    package var app: String
    package var id: String
    package init(app: String, id: String) {
        self.app = app
        self.id = id
    }
}

/// A pending schedule as a dispatcher reports it (STATUS, `zflux schedules`).
package struct PendingSchedule: Codable, Equatable, Sendable {
    package var id: String
    package var app: String
    package var actionType: String
    /// Due, in nanoseconds since the Unix epoch.
    package var dueNanoseconds: Int64
    /// The seq of the request that made it.
    package var requestSeq: UInt64

    package init(id: String, app: String, actionType: String, dueNanoseconds: Int64, requestSeq: UInt64) {
        self.id = id
        self.app = app
        self.actionType = actionType
        self.dueNanoseconds = dueNanoseconds
        self.requestSeq = requestSeq
    }
}

import Examples
import FluxCore
import Foundation
import Testing

/// The test vectors of docs/protocol-vectors/vectors.json, checked against the code both ways: each
/// vector's bytes decode to its meaning, and its meaning encodes to its bytes. A vector file that
/// drifts from the code (or code that drifts from the file, which a client in another language tests
/// itself with) fails here.
///
/// The file is written once from its meanings: `ZFLUX_RECORD_VECTORS=1 swift test --filter
/// ProtocolVectorTests` fills in every byte from the code and then fails on purpose, so a recording
/// is never taken for a pass. Review the diff before committing it.
@Suite("The protocol's test vectors (docs/protocol-vectors)")
struct ProtocolVectorTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/protocol-vectors/vectors.json")

    static func load() throws -> VectorFile {
        try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: file))
    }

    @Test("recording is off: the vectors are checked, never written, unless ZFLUX_RECORD_VECTORS=1 asks for it")
    func recordOnlyWhenAsked() throws {
        guard ProcessInfo.processInfo.environment["ZFLUX_RECORD_VECTORS"] == "1" else { return }
        var vectors = try Self.load()
        try vectors.record()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try (encoder.encode(vectors) + Data("\n".utf8)).write(to: Self.file)
        Issue.record("recorded \(Self.file.path): review the diff, then run the tests again without ZFLUX_RECORD_VECTORS")
    }

    @Test("the file holds a vector for every message kind, and every vector has its bytes")
    func coverage() throws {
        let vectors = try Self.load()
        let kinds = Set(try vectors.messages.map { try $0.header.header().kind })
        #expect(kinds == Set(MessageKind.allCases), "kinds without a vector: \(Set(MessageKind.allCases).subtracting(kinds))")
        #expect(!vectors.headers.isEmpty && !vectors.badHeaders.isEmpty && !vectors.payloads.isEmpty && !vectors.parts.isEmpty)
        for vector in vectors.messages { #expect(!vector.headerHex.isEmpty, "\(vector.name) has no bytes: record the file") }
        // Scheduled actions: a request of each type on the reserved topic, and an action a schedule fired.
        let scheduling = vectors.messages.filter { $0.topic == Schedules.topic }.map(\.header.actionType)
        #expect(Set(scheduling) == [Schedules.scheduleType, Schedules.cancelType], "schedule requests with a vector: \(scheduling)")
        #expect(vectors.messages.contains { $0.header.kind == "ACTION" && $0.header.flags.contains("scheduled") }, "a vector of a fired ACTION")
        for vector in vectors.payloads { #expect(!vector.binary.isEmpty, "\(vector.name) has no bytes: record the file") }
    }

    @Test("headers: the bytes decode to the fields, and the fields encode to the bytes")
    func headers() throws {
        for vector in try Self.load().headers {
            let bytes = try Hex.bytes(vector.hex)
            let header = try vector.header.header()
            #expect(try Header(decoding: bytes) == header, "\(vector.name)")
            #expect(header.encoded() == bytes, "\(vector.name)")
            #expect(VectorHeader(header) == vector.header, "\(vector.name): version, kind value and flags value")
        }
    }

    @Test("the flag bits the vectors name are PROTOCOL.md's, bit for bit; the \"every flag bit\" vector sets them all and calls the rest reserved")
    func flagBits() throws {
        let protocolPage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/PROTOCOL.md")
        let page = try String(contentsOf: protocolPage, encoding: .utf8)
        let row = try #require(
            page.components(separatedBy: "\n").first { $0.hasPrefix("| 4 | 2 | flags |") }, "PROTOCOL.md's header table has a flags row")
        let named = try NSRegularExpression(pattern: "bit ([0-9]+) `([A-Za-z]+)`").matches(in: row, range: NSRange(row.startIndex..., in: row))
            .compactMap { match -> (String, Int)? in
                guard let bit = Range(match.range(at: 1), in: row), let name = Range(match.range(at: 2), in: row), let number = Int(row[bit]) else {
                    return nil
                }
                return (String(row[name]), number)
            }
        let code = VectorHeader.flagNames.map { ($0.0, $0.1.rawValue.trailingZeroBitCount) }
        #expect(named.map(\.0) == code.map(\.0) && named.map(\.1) == code.map(\.1), "PROTOCOL.md names \(named); the vectors know \(code)")
        for (name, flag) in VectorHeader.flagNames { #expect(flag.rawValue.nonzeroBitCount == 1, "\(name) is one bit") }
        let firstReserved = code.count
        #expect(row.contains("Bits \(firstReserved) to 15 are reserved"), "PROTOCOL.md calls bits \(firstReserved) to 15 reserved")
        let every = try #require(try Self.load().headers.first { $0.name == "every flag bit" })
        #expect(every.header.flags == VectorHeader.flagNames.map(\.0), "the vector sets every flag the protocol names")
        #expect(every.header.flagsValue == (1 << firstReserved) - 1)
        #expect(every.note == "bits \(firstReserved) to 15 are reserved: written 0, ignored when read", "\(every.note ?? "")")
    }

    @Test("the numbers PROTOCOL.md shows in JSON are what the JSON codec writes, and what a binary payload reads as without its type")
    func jsonNumbers() throws {
        let page = try String(
            contentsOf: Self.file.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("PROTOCOL.md"), encoding: .utf8
        ).replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
        let doubles: [(Double, String)] = [
            (1.0, "1"), (-0.0, "-0"), (0.1, "0.1"), (1.5, "1.5"), (2.5e-05, "2.5e-05"), (18_446_744_073_709_551_616, "1.8446744073709552e+19"),
        ]
        for (value, text) in doubles {
            #expect(page.contains("`\(text)`"), "PROTOCOL.md shows \(text)")
            #expect(try JSONPayloadCodec().encode(value) == Array(text.utf8), "\(value) in the JSON codec")
            #expect(
                try GenericJSON.json(fromWire: try BinaryPayloadCodec(generated: false).encode(value)) == Array(text.utf8),
                "\(value) read without its type")
        }
        let big = [1e20, 123_456_789_012_345_680_000.0]
        for value in big {
            let text = String(decoding: try JSONPayloadCodec().encode(value), as: UTF8.self)
            let generic = String(decoding: try GenericJSON.json(fromWire: try BinaryPayloadCodec(generated: false).encode(value)), as: UTF8.self)
            #expect(text == generic && text.contains("e+"), "\(value): the JSON codec writes \(text), a reader without its type \(generic)")
        }
        #expect(
            try JSONPayloadCodec().encode(Int64.min) == Array("-9223372036854775808".utf8)
                && (try JSONPayloadCodec().encode(UInt64.max)) == Array("18446744073709551615".utf8))
        #expect(throws: (any Error).self, "NaN has no JSON form") { try JSONPayloadCodec().encode(Double.nan) }
    }

    @Test("version 1 headers are still read, with history 0")
    func oldHeaders() throws {
        for vector in try Self.load().oldHeaders {
            let bytes = try Hex.bytes(vector.hex)
            let decoded = try Header(decoding: bytes)
            #expect(decoded == (try vector.header.header()), "\(vector.name)")
            #expect(decoded.history == 0)
            #expect(VectorHeader(decoded, version: Int(bytes[2])) == vector.header, "\(vector.name)")
        }
    }

    @Test("bad headers are refused with the error the vector names, alone and inside a message")
    func badHeaders() throws {
        for vector in try Self.load().badHeaders {
            let bytes = try Hex.bytes(vector.hex)
            let alone = #expect(throws: ProtocolError.self, "\(vector.name)") { try Header(decoding: bytes) }
            #expect(alone?.code.description == vector.error, "\(vector.name): \(String(describing: alone))")
            let inMessage = #expect(throws: ProtocolError.self, "\(vector.name)") { try Message(frames: [[], bytes, []]) }
            #expect(inMessage?.code.description == vector.error, "\(vector.name)")
        }
    }

    @Test("payloads: each value's bytes in both codecs, read by its Swift type and by a reader that knows no type")
    func payloads() throws {
        for vector in try Self.load().payloads {
            try Self.checkPayload(vector.name, type: vector.type, binary: try Hex.bytes(vector.binary), json: vector.json)
        }
    }

    /// One payload vector against the code: both encoders (`Codable` and generated) write `binary` for the
    /// value `json` describes, both decoders read it back to that value, the JSON codec writes exactly
    /// `json`, and the transcoder that knows no type turns `binary` into `json` too.
    static func checkPayload(_ name: String, type: String, binary: [UInt8], json text: String) throws {
        let codec = try TypedCodec.named(type)
        let json = Array(text.utf8)
        #expect(binary.first == BinaryPayloadCodec.marker, "\(name)")
        for generated in [true, false] {
            #expect(try codec.encode(json, generated) == binary, "\(name): encoded (generated: \(generated))")
            #expect(try codec.decode(binary, generated) == json, "\(name): decoded (generated: \(generated))")
        }
        #expect(try codec.normalize(json) == json, "\(name): the JSON codec writes exactly this text")
        #expect(try GenericJSON.json(fromWire: binary) == json, "\(name): read without its type")
        #expect(BinaryPayloadCodec.isWellFormed(binary), "\(name)")
    }

    @Test("messages: the three frames decode to the meaning, and the meaning encodes to the frames")
    func messages() throws {
        for vector in try Self.load().messages { try Self.check(vector, path: vector.name) }
    }

    @Test("messages in parts: split as the vector says, and put back together whole")
    func parts() throws {
        for vector in try Self.load().parts {
            let whole = try vector.whole.message()
            try Self.check(vector.whole, path: vector.name)
            let parts = try vector.parts.map { try $0.message() }
            #expect(MessageParts.split(whole, partBytes: vector.partBytes) == parts, "\(vector.name)")
            var assembler = MessageAssembler()
            var joined: [Message] = []
            for (index, part) in vector.parts.enumerated() {
                try Self.check(part, path: "\(vector.name), part \(index)")
                let message = try Message(frames: [Array(part.topic.utf8), try Hex.bytes(part.headerHex), try Hex.bytes(part.payloadHex)])
                if let done = assembler.accept(message) { joined.append(done) }
            }
            #expect(joined == [whole], "\(vector.name): the parts join into the whole message")
        }
    }

    /// One message vector (and its entries): frames → meaning with the decoders nodes use, meaning →
    /// frames with the encoders they use.
    static func check(_ vector: MessageVector, path: String) throws {
        let header = try vector.header.header()
        let headerBytes = try Hex.bytes(vector.headerHex), payload = try Hex.bytes(vector.payloadHex)
        let message = try Message(frames: [Array(vector.topic.utf8), headerBytes, payload])
        #expect(message.header == header, "\(path): header")
        #expect(VectorHeader(message.header) == vector.header, "\(path): version, kind value and flags value")
        #expect(header.encoded() == headerBytes, "\(path): header bytes")
        #expect(try vector.payload(header: header) == payload, "\(path): payload bytes")
        if let json = vector.payloadJSON {
            #expect(try GenericJSON.json(fromWire: payload) == Array(json.utf8), "\(path): payload read without its type")
            if let type = vector.payloadType {
                #expect(try TypedCodec.named(type).decode(payload, true) == Array(json.utf8), "\(path): payload read as \(type)")
            }
        }
        if let text = vector.payloadText { #expect(String(validating: payload, as: UTF8.self) == text, "\(path): payload text") }
        if let entries = vector.entries {
            for (index, entry) in entries.enumerated() { try check(entry, path: "\(path), entry \(index)") }
            let expected = try entries.map { try $0.message() }
            switch header.kind {
            case .actionBatch:
                #expect(try ActionBatch.actions(of: message) == expected, "\(path): ACTION-BATCH read")
                #expect(ActionBatch.messages(for: expected, history: header.history) == [message], "\(path): ACTION-BATCH written")
            case .dispatchBatch:
                #expect(try DispatchBatch.dispatches(of: message) == expected, "\(path): DISPATCH-BATCH read")
                #expect(DispatchBatch.message(expected) == message, "\(path): DISPATCH-BATCH written")
            default:
                #expect(try ReplayBatch.decode(payload) == expected, "\(path): batch read")
            }
        }
        if let acks = vector.acks {
            let batch = try AckBatch(message)
            #expect(batch.entries == (try acks.map { try $0.entry() }), "\(path): ACK-BATCH read")
            #expect(AckBatch(entries: batch.entries, history: header.history).message == message, "\(path): ACK-BATCH written")
        }
        switch header.kind {
        case .status:
            #expect(try NodeStatus.decode(payload).encoded() == payload, "\(path): STATUS read and written")
        case .replicaQuarantine:
            let list = try #require(QuarantineList.decode(payload), "\(path): a quarantine list")
            #expect(QuarantineList.encode(list) == payload && QuarantineList.digest(payload) == header.ref, "\(path): the list and its digest")
        default:
            break
        }
    }
}

// MARK: - The file

struct VectorFile: Codable {
    var about: [String]
    var headers: [HeaderVector]
    var oldHeaders: [HeaderVector]
    var badHeaders: [BadHeaderVector]
    var payloads: [PayloadVector]
    var messages: [MessageVector]
    var parts: [PartsVector]

    /// Every byte from the meanings, with the code.
    mutating func record() throws {
        for index in headers.indices {
            let header = try headers[index].header.header()
            headers[index].hex = Hex.text(header.encoded())
            headers[index].header = VectorHeader(header)
        }
        for index in payloads.indices {
            payloads[index].binary = Hex.text(try TypedCodec.named(payloads[index].type).encode(Array(payloads[index].json.utf8), true))
        }
        for index in messages.indices { try messages[index].record() }
        for index in parts.indices {
            try parts[index].whole.record()
            let whole = try parts[index].whole.message()
            let split = MessageParts.split(whole, partBytes: parts[index].partBytes)
            parts[index].parts = split.enumerated().map { number, part in
                let count = split.count
                return MessageVector(
                    name: "part \(number) of \(count)", topic: String(decoding: part.topic, as: UTF8.self), header: VectorHeader(part.header),
                    headerHex: Hex.text(part.encodedHeader), payloadHex: Hex.text(part.payload),
                    part: PartMeaning(index: number, count: count, slice: Hex.text(Array(part.payload.dropFirst(8)))))
            }
        }
    }
}

struct HeaderVector: Codable {
    var name: String
    var note: String?
    var hex: String
    var header: VectorHeader
}

struct BadHeaderVector: Codable {
    var name: String
    var hex: String
    /// The ``ProtocolError`` code zflux throws.
    var error: String
}

struct PayloadVector: Codable {
    var name: String
    var note: String?
    /// The Swift type that wrote the value (``TypedCodec/named(_:)``).
    var type: String
    var binary: String
    var json: String
}

struct PartsVector: Codable {
    var name: String
    var note: String?
    var partBytes: Int
    var whole: MessageVector
    var parts: [MessageVector]
}

struct PartMeaning: Codable, Equatable {
    var index: Int
    var count: Int
    var slice: String
}

struct AckMeaning: Codable {
    var seq: String
    var clientID: String
    var clientSeq: String
    var timestamp: String

    func entry() throws -> AckBatch.Entry {
        AckBatch.Entry(seq: try Hex.u64(seq), clientID: try Hex.u64(clientID), clientSeq: try Hex.u64(clientSeq), timestamp: try Hex.i64(timestamp))
    }
}

/// A header's fields as a vector writes them: the kind and flags by name, 64-bit numbers as decimal text,
/// and what the kind and flags give (version, kind value, flags value).
struct VectorHeader: Codable, Equatable {
    var version: Int?
    var kind: String
    var kindValue: Int?
    var flags: [String]
    var flagsValue: Int?
    var seq: String
    var ref: String
    var clientID: String
    var clientSeq: String
    var timestamp: String
    var history: String
    var actionType: String

    static let flagNames: [(String, Header.Flags)] = [
        ("fullState", .fullState), ("catchingUp", .catchingUp), ("historyTruncated", .historyTruncated), ("part", .part),
        ("retryLater", .retryLater), ("batchReplies", .batchReplies), ("notLeader", .notLeader), ("quarantined", .quarantined),
        ("scheduled", .scheduled), ("byEffect", .byEffect),
    ]

    init(_ header: Header, version: Int? = nil) {
        self.version = version ?? Int(header.kind.protocolVersion)
        kind = header.kind.description
        kindValue = Int(header.kind.rawValue)
        flags = Self.flagNames.filter { header.flags.contains($0.1) }.map(\.0)
        flagsValue = Int(header.flags.rawValue)
        seq = String(header.seq)
        ref = String(header.ref)
        clientID = String(header.clientID)
        clientSeq = String(header.clientSeq)
        timestamp = String(header.timestamp)
        history = String(header.history)
        actionType = header.actionType
    }

    func header() throws -> Header {
        guard let kind = MessageKind.allCases.first(where: { $0.description == self.kind }) else { throw VectorError("no kind \(self.kind)") }
        var flags: Header.Flags = []
        for name in self.flags {
            guard let flag = Self.flagNames.first(where: { $0.0 == name }) else { throw VectorError("no flag \(name)") }
            flags.insert(flag.1)
        }
        return Header(
            kind: kind, flags: flags, seq: try Hex.u64(seq), ref: try Hex.u64(ref), clientID: try Hex.u64(clientID),
            clientSeq: try Hex.u64(clientSeq), timestamp: try Hex.i64(timestamp), actionType: actionType, history: try Hex.u64(history))
    }
}

/// One message: its frames, and what its payload means in whichever form fits the kind.
struct MessageVector: Codable {
    var name: String
    var note: String?
    var topic: String
    var header: VectorHeader
    var headerHex: String
    var payloadHex: String
    /// With `payloadJSON`: the Swift type whose codec wrote the payload in binary.
    var payloadType: String?
    /// The payload as JSON text: a binary payload as a reader that knows no type prints it, a JSON one as it is.
    var payloadJSON: String?
    var payloadText: String?
    /// Messages packed in the REPLAY-BATCH layout.
    var entries: [MessageVector]?
    var acks: [AckMeaning]?
    /// u64 little-endian words.
    var words: [String]?
    var part: PartMeaning?

    init(
        name: String, topic: String, header: VectorHeader, headerHex: String, payloadHex: String, part: PartMeaning? = nil
    ) {
        self.name = name
        self.topic = topic
        self.header = header
        self.headerHex = headerHex
        self.payloadHex = payloadHex
        self.part = part
    }

    /// The payload the meaning gives, written with the code nodes use.
    func payload(header: Header) throws -> [UInt8] {
        if let entries { return ReplayBatch.encode(try entries.map { try $0.message() }) }
        if let acks { return AckBatch(entries: try acks.map { try $0.entry() }, history: header.history).message.payload }
        if let words {
            var bytes: [UInt8] = []
            for word in words { bytes.appendLittleEndian(try Hex.u64(word)) }
            return bytes
        }
        if let part {
            var bytes: [UInt8] = []
            bytes.appendLittleEndian(UInt32(part.index))
            bytes.appendLittleEndian(UInt32(part.count))
            return bytes + (try Hex.bytes(part.slice))
        }
        if let payloadJSON {
            guard let payloadType else { return Array(payloadJSON.utf8) }
            return try TypedCodec.named(payloadType).encode(Array(payloadJSON.utf8), true)
        }
        return Array((payloadText ?? "").utf8)
    }

    func message() throws -> Message {
        let header = try header.header()
        return Message(topic: topic, header: header, payload: try payload(header: header))
    }

    mutating func record() throws {
        if let entries {
            var recorded = entries
            for index in recorded.indices { try recorded[index].record() }
            self.entries = recorded
        }
        var header = try self.header.header()
        let payload = try payload(header: header)
        if header.kind == .replicaQuarantine { header.ref = QuarantineList.digest(payload) }
        self.header = VectorHeader(header)
        headerHex = Hex.text(header.encoded())
        payloadHex = Hex.text(payload)
    }
}

struct VectorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Hex {
    static func bytes(_ text: String) throws -> [UInt8] {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { throw VectorError("odd hex length: \(text.prefix(20))") }
        return try stride(from: 0, to: digits.count, by: 2).map { at in
            guard let byte = UInt8(String(decoding: digits[at..<at + 2], as: UTF8.self), radix: 16) else {
                throw VectorError("not hex at \(at): \(text.prefix(20))")
            }
            return byte
        }
    }

    static func text(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    static func u64(_ text: String) throws -> UInt64 {
        guard let value = UInt64(text) else { throw VectorError("not a u64: \(text)") }
        return value
    }

    static func i64(_ text: String) throws -> Int64 {
        guard let value = Int64(text) else { throw VectorError("not an i64: \(text)") }
        return value
    }
}

/// The Swift types the vectors' payloads are written from, by the name the file uses.
struct TypedCodec: Sendable {
    /// JSON text → the value → the binary codec's bytes (`generated`: the `@WireCodable` path where the type has one).
    let encode: @Sendable (_ json: [UInt8], _ generated: Bool) throws -> [UInt8]
    /// Binary bytes → the value → the JSON codec's bytes.
    let decode: @Sendable (_ binary: [UInt8], _ generated: Bool) throws -> [UInt8]
    /// JSON text → the value → the JSON codec's bytes.
    let normalize: @Sendable (_ json: [UInt8]) throws -> [UInt8]

    static func of<T: Codable & Sendable>(_: T.Type) -> TypedCodec {
        TypedCodec(
            encode: { json, generated in try BinaryPayloadCodec(generated: generated).encode(try JSONPayloadCodec().decode(T.self, from: json)) },
            decode: { binary, generated in try JSONPayloadCodec().encode(try BinaryPayloadCodec(generated: generated).decode(T.self, from: binary)) },
            normalize: { json in try JSONPayloadCodec().encode(try JSONPayloadCodec().decode(T.self, from: json)) })
    }

    static let all: [String: TypedCodec] = [
        "Bool": of(Bool.self), "Int": of(Int.self), "Int8": of(Int8.self), "Int16": of(Int16.self), "Int32": of(Int32.self),
        "Int64": of(Int64.self), "UInt8": of(UInt8.self), "UInt16": of(UInt16.self), "UInt32": of(UInt32.self), "UInt64": of(UInt64.self),
        "Int?": of(Int?.self), "Todo.State": of(Todo.State.self),
        "Double": of(Double.self), "Float": of(Float.self), "String": of(String.self), "[Int]": of([Int].self),
        "[String]": of([String].self), "[Int?]": of([Int?].self), "[[Int]]": of([[Int]].self), "[String: Int]": of([String: Int].self),
        "[Int: String]": of([Int: String].self), "Counter.State": of(Counter.State.self), "Counter.Action": of(Counter.Action.self),
        "Todo.Action": of(Todo.Action.self), "Ledger.Account": of(Ledger.Account.self), "Ledger.Action": of(Ledger.Action.self),
        "Ledger.State": of(Ledger.State.self), "Ledger.State.Changes": of(Ledger.State.Changes.self), "Quarantine": of(Quarantine.self),
        "[Quarantine]": of([Quarantine].self), "ScheduleRequest": of(ScheduleRequest.self), "ScheduleCancel": of(ScheduleCancel.self),
    ]

    static func named(_ name: String) throws -> TypedCodec {
        guard let codec = all[name] else { throw VectorError("no Swift type named \(name) in ProtocolVectorTests") }
        return codec
    }
}

import Foundation
import Testing

@testable import FluxCore
@testable import FluxFormat
@testable import FluxProtocol

extension Header {
    static func random(kind: MessageKind) -> Header {
        Header(
            kind: kind, flags: Flags(rawValue: .random(in: 0...UInt16.max)), seq: .random(in: 0...UInt64.max),
            ref: .random(in: 0...UInt64.max), clientID: .random(in: 0...UInt64.max),
            clientSeq: .random(in: 0...UInt64.max), timestamp: .random(in: Int64.min...Int64.max),
            actionType: [.dispatch, .action].contains(kind) ? "addTodo" : "")
    }
}

@Suite("The wire protocol")
struct ProtocolTests {
    @Test("every message kind survives encode → decode", arguments: MessageKind.allCases)
    func roundTrip(kind: MessageKind) throws {
        for _ in 0..<50 {
            let message = Message(
                topic: Array("todo".utf8), header: .random(kind: kind),
                payload: (0..<Int.random(in: 0...64)).map { _ in UInt8.random(in: 0...255) })
            let decoded = try Message(frames: message.frames)
            #expect(decoded == message)
            let routed = try Message.split(routed: message.routedFrames(to: [0, 1, 2]))
            #expect(routed.peer == [0, 1, 2])
            #expect(routed.message == message)
        }
    }

    @Test("the header layout is the documented one")
    func documentedLayout() {
        let bytes = Header(
            kind: .ack, flags: .fullState, seq: 0x0102030405060708, ref: 9, clientID: 10,
            clientSeq: 11, timestamp: 12, actionType: "ab", history: 13
        ).encoded()
        #expect(bytes.count == 58)
        #expect(Array(bytes[0..<8]) == [0x5A, 0x46, 2, MessageKind.ack.rawValue, 1, 0, 2, 0])
        #expect(Array(bytes[8..<16]) == [8, 7, 6, 5, 4, 3, 2, 1], "little-endian seq")
        #expect(bytes[16] == 9 && bytes[24] == 10 && bytes[32] == 11 && bytes[40] == 12 && bytes[48] == 13)
        #expect(Array(bytes[56...]) == Array("ab".utf8))
    }

    @Test("a version-1 header (no history field) still decodes, with history 0")
    func version1Header() throws {
        var bytes: [UInt8] = [0x5A, 0x46, 1, MessageKind.action.rawValue, 0, 0, 2, 0]
        bytes.appendLittleEndian(UInt64(5))
        bytes += [UInt8](repeating: 0, count: 32)
        bytes += Array("ab".utf8)
        let header = try Header(decoding: bytes)
        #expect(header.kind == .action && header.seq == 5 && header.actionType == "ab" && header.history == 0)
    }

    @Test("a header cut short anywhere is a truncation error")
    func truncated() {
        let bytes = Header(kind: .dispatch, actionType: "addTodo").encoded()
        for length in 0..<bytes.count {
            let error = #expect(throws: ProtocolError.self) { try Header(decoding: Array(bytes.prefix(length))) }
            #expect(error?.code == .truncated || error?.code == .badMagic, "length \(length)")
        }
    }

    @Test("wrong magic, version, kind and action type are named")
    func wrongFields() {
        var bytes = Header(kind: .dispatch, actionType: "addTodo").encoded()
        func decodeError(_ mutate: (inout [UInt8]) -> Void) -> ProtocolError.Code? {
            var copy = bytes
            mutate(&copy)
            do { _ = try Header(decoding: copy); return nil } catch { return error.code }
        }
        #expect(decodeError { $0[0] = 0x00 } == .badMagic)
        #expect(decodeError { $0[2] = 4 } == .unsupportedVersion)
        #expect(decodeError { $0[3] = 0 } == .unknownKind)
        #expect(decodeError { $0[3] = 200 } == .unknownKind)
        #expect(decodeError { $0[56] = UInt8(ascii: "{") } == .badActionType)
        #expect(decodeError { $0[56] = UInt8(ascii: "1") } == .badActionType)
        #expect(decodeError { $0.append(0) } == .truncated, "a length that does not match the bytes")
        bytes[6] = 0
        #expect(decodeError { _ in } == .truncated)
    }

    @Test("a message needs exactly three frames")
    func frameCount() {
        let frames = Message(header: Header(kind: .heartbeat)).frames
        for count in [0, 1, 2, 4, 5] {
            let candidate = Array((frames + frames).prefix(count))
            let error = #expect(throws: ProtocolError.self) { try Message(frames: candidate) }
            #expect(error?.code == .wrongFrameCount)
        }
        #expect(throws: ProtocolError.self) { try Message.split(routed: frames) }
    }

    @Test("random bytes never crash a decoder; every failure is a ProtocolError")
    func garbage() {
        var rng = SplitMix64(seed: 42)
        let valid = Header(kind: .action, seq: 7, actionType: "addTodo").encoded()
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                // Mostly valid headers with a few bytes flipped reach deeper checks.
                bytes = valid
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            do { _ = try Header(decoding: bytes) } catch {}
            do { _ = try ReplayBatch.decode(bytes) } catch {}
            do { _ = try Message(frames: [bytes, bytes, bytes]) } catch {}
        }
    }

    @Test("replay batches round-trip and reject truncation and trailing bytes")
    func replayBatch() throws {
        let actions = (1...20).map { seq in
            Message(
                topic: Array("todo".utf8), header: Header(kind: .action, seq: UInt64(seq), actionType: "addTodo"),
                payload: Array("{\"addTodo\":{\"title\":\"n\(seq)\"}}".utf8))
        }
        let bytes = ReplayBatch.encode(actions)
        #expect(try ReplayBatch.decode(bytes) == actions)
        #expect(try ReplayBatch.decode(ReplayBatch.encode([])) == [])
        for cut in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: ProtocolError.self) { try ReplayBatch.decode(Array(bytes.prefix(cut))) }
        }
        #expect(throws: ProtocolError.self) { try ReplayBatch.decode(bytes + [0]) }
        let notAction = ReplayBatch.encode([Message(header: Header(kind: .ack))])
        let error = #expect(throws: ProtocolError.self) { try ReplayBatch.decode(notAction) }
        #expect(error?.code == .unexpectedKind)
        var hugeCount = bytes
        hugeCount[0] = 0xFF; hugeCount[1] = 0xFF; hugeCount[2] = 0xFF; hugeCount[3] = 0x7F
        #expect(throws: ProtocolError.self) { try ReplayBatch.decode(hugeCount) }
    }

    @Test("action type names: letters, digits and underscores, not starting with a digit")
    func actionTypeNames() {
        for good in ["a", "addTodo", "_x", "set2"] { #expect(Header.isValidActionType(Array(good.utf8))) }
        for bad in ["", "2x", "add-todo", "a\"b", "a b", String(repeating: "a", count: 256)] {
            #expect(!Header.isValidActionType(Array(bad.utf8)), "\(bad)")
        }
    }
}

@Suite("PROTOCOL.md")
struct ProtocolDocumentTests {
    @Test("its title names the version the header carries")
    func titleVersion() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/PROTOCOL.md").standardized
        let title = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").first.map(String.init) ?? ""
        #expect(title == "# zflux wire protocol, version \(Header.protocolVersion)")
    }
}

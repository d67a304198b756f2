// libFuzzer entry point for zflux's decoders. Built by scripts/fuzz.sh from the FluxCore and Examples
// sources (not by SwiftPM); ZFLUX_FUZZ_TARGET picks the decoder. Every decoder must turn any input
// into a value or a typed error: a crash, a trap or an address-sanitizer report fails the run.
import Examples
import FluxCore
import Foundation

let target = ProcessInfo.processInfo.environment["ZFLUX_FUZZ_TARGET"] ?? "header"
let todo = Todo.app(environment: .mock())

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch target {
    case "header":
        if let header = try? Header(decoding: bytes) {
            // Whatever decodes must encode back: to the same bytes when it was a current header; a
            // version-1 header (still read) is written as the current version, with the same values.
            if bytes[2] == Header.protocolVersion {
                precondition(header.encoded() == bytes, "header does not round-trip")
            } else {
                precondition((try? Header(decoding: header.encoded())) == header, "a version-1 header does not survive re-encoding")
            }
        }
    case "message":
        // The input is split into frames at 0xFF bytes: frame counts and sizes vary with it.
        let frames = bytes.split(separator: 0xFF, omittingEmptySubsequences: false).map(Array.init)
        _ = try? Message(frames: frames)
        _ = try? Message.split(routed: frames)
    case "replay":
        if let messages = try? ReplayBatch.decode(bytes) {
            // Entries with version-1 headers are written back as the current version: compare values.
            precondition((try? ReplayBatch.decode(ReplayBatch.encode(messages))) == messages, "replay batch does not round-trip")
        }
    case "journal":
        var offset = 0
        while offset < bytes.count, case .success(let record) = JournalRecord.read(bytes, at: offset) { offset += record.size }
    case "snapshot":
        _ = try? SnapshotFormat.decode(bytes)
    case "action":
        // A header-like prefix picks the action type; the rest is the payload.
        let type = ["addTodo", "toggleTodo", "removeTodo", "clearCompleted", "loadTapped", "todosLoaded", "nope"][Int(bytes.first ?? 0) % 7]
        try? todo.check(actionType: type, payload: Array(bytes.dropFirst()))
        if let runtime = Optional(todo.makeRuntime { _, _, _ in }) {
            _ = try? runtime.apply(app: "todo", actionType: type, payload: Array(bytes.dropFirst()), stamp: .unstamped, runEffects: false)
        }
    default:
        fatalError("unknown ZFLUX_FUZZ_TARGET \(target)")
    }
    return 0
}

import Foundation
import NodeSupport
import Testing

/// What a store quotes from its log when it asks for an action to be quarantined (``CrashLog``).
@Suite("The trap a node's log says it died of")
struct CrashLogTests {
    static let started = "the last run died applying an action"

    func lastTrap(_ text: String) throws -> String? {
        let path = NSTemporaryDirectory() + "zflux-crashlog-\(UUID().uuidString.prefix(8)).log"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return CrashLog.lastTrap(log: path, after: Self.started)
    }

    @Test(
        "the headline of the report the last run left, after its start: a runtime message before a crash line, the first of a symbolicated report's, none of an older run's"
    )
    func headlineOfTheLastRun() throws {
        let older = "Old.swift:1: Fatal error: an older crash\n"
        #expect(
            try lastTrap(
                older
                    + "info \(Self.started) times=1\nA.swift:24: Fatal error: drill: a reducer that traps (x)\n*** Program crashed: Illegal instruction at 0x1 ***\n"
            ) == "A.swift:24: Fatal error: drill: a reducer that traps (x)")
        #expect(
            try lastTrap(
                older
                    + "\(Self.started)\n*** Swift runtime failure: arithmetic overflow ***\n  0 [inlined] [system] 0x1 Swift runtime failure: arithmetic overflow in x at //<compiler-generated>\n"
            ) == "Swift runtime failure: arithmetic overflow")
        #expect(
            try lastTrap(older + "\(Self.started)\n*** Program crashed: Illegal instruction at 0x0000561e27fa6ea6 ***\n")
                == "Program crashed: Illegal instruction at 0x0000561e27fa6ea6")
        #expect(try lastTrap(older + "\(Self.started)\nnothing said\n") == nil, "an older run's crash is not this one's")
        #expect(try lastTrap(older) == "Old.swift:1: Fatal error: an older crash", "no start in the log: its newest report")
        #expect(CrashLog.lastTrap(log: "/nonexistent/zflux.log", after: Self.started) == nil)
    }
}

import Dispatcher
import FluxCore
import Foundation
import Testing

extension JournalCommandTests {
    @Test(
        "zflux journal dump of a journal whose oldest segments are gone prints from its first seq by default, and refuses a --from it no longer holds, saying the records were compacted away"
    )
    func dumpCompacted() throws {
        var template = Array("/tmp/zf-compacted-XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first: UInt64
        do {
            let journal = try Journal(directory: dir, policy: .none, segmentBytes: 4096)
            try journal.append(
                (1...300).map { seq in
                    Message(
                        topic: Array("counter".utf8), header: Header(kind: .action, seq: seq, clientID: 7, clientSeq: seq, actionType: "resetTapped"),
                        payload: [])
                })
            try journal.commit()
            try journal.removeOldestSegments(2)
            first = journal.firstSeq
        }
        try #require(first > 1)
        let dump = try zflux(["journal", "dump", "--journal", dir])
        let seqs = dump.stdout.split(separator: "\n").compactMap { line -> UInt64? in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["seq"].flatMap { ($0 as? NSNumber)?.uint64Value }
        }
        #expect(dump.status == 0 && seqs == Array(first...300), "\(dump.stderr)")
        let refused = try zflux(["journal", "dump", "--journal", dir, "--from", "1"])
        #expect(refused.status != 0 && refused.stdout.isEmpty, "\(refused.stdout)")
        #expect(refused.stderr.contains("compacted") && refused.stderr.contains("seq \(first)"), "\(refused.stderr)")
    }
}

extension JournalCommandTests {
    @Test("zflux journal fill stops on a config it cannot read, writing nothing, and says so when no segment rolled")
    func fillReadsItsConfig() throws {
        var template = Array("/tmp/zf-fill-XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let arguments = ["journal", "fill", "--records", "10", "--app", "counter", "--action", "incrementTapped", "--run-dir", dir]
        let refused = try zflux(arguments + ["--config", dir + "/missing.toml"])
        #expect(refused.status != 0 && refused.stderr.contains("missing.toml"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty, "nothing written")
        let filled = try zflux(arguments)
        #expect(
            filled.status == 0 && filled.stdout.contains("10 actions") && filled.stdout.contains("no checkpoint"), "\(filled.stdout)\(filled.stderr)")
    }
}

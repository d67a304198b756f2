import Foundation
import Testing

@testable import Bench

@Suite("bench --attach's live feed: the seconds the load closes, the file, and devtools' reader of it")
struct LiveFeedTests {
    func temporaryDirectory() throws -> String {
        var template = Array("/tmp/zf-feed-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp failed") }
        return String(cString: made)
    }

    func kinds(_ lines: [String]) -> [String] {
        lines.map { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["kind"] as? String ?? "?"
        }
    }

    func appendRaw(_ text: String, to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        _ = try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    @Test("the receiving thread's seconds: each closed once the clock passes it, quiet ones too, the last on finish")
    func recorderSeconds() {
        let progress = LoadProgress()
        var recorder = LiveSecondRecorder()
        for us in 1...100 { recorder.record(latencyNanoseconds: UInt64(us) * 1_000) }
        recorder.advance(toElapsed: 900_000_000, sent: 100, acked: 100, progress: progress)
        #expect(progress.takeFinishedSeconds().isEmpty, "second 0 is still under way")
        recorder.advance(toElapsed: 2_100_000_000, sent: 150, acked: 120, progress: progress)
        let closed = progress.takeFinishedSeconds()
        #expect(closed.map(\.second) == [0, 1])
        #expect(closed.map(\.acks) == [100, 0], "second 1 had no ACK, and says so")
        #expect(closed.first.map { abs($0.p50Us - 50) <= 1 && abs($0.p99Us - 99) <= 1 } == true, "\(closed)")
        #expect(closed.first.map { ($0.sent, $0.acked) } ?? (0, 0) == (150, 120))
        #expect(progress.takeFinishedSeconds().isEmpty, "taken once")
        recorder.record(latencyNanoseconds: 5_000_000)
        recorder.finish(sent: 200, acked: 200, progress: progress)
        let last = progress.takeFinishedSeconds()
        #expect(last.map(\.second) == [2] && last.first?.acks == 1 && last.first.map { abs($0.p50Us - 5_000) <= 50 } == true)
        // Nobody taking them: only the newest are kept.
        for _ in 0..<(LoadProgress.keptSeconds + 10) { recorder.finish(sent: 0, acked: 0, progress: progress) }
        #expect(progress.takeFinishedSeconds().count == LoadProgress.keptSeconds)
    }

    @Test("a reader that starts mid-run gets every line so far, holds a half-written line, and starts over when a new run replaces the file")
    func readerFollowsRuns() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var reader = BenchLiveFeedReader(runDirectory: directory)
        let none = reader.poll()
        #expect(!none.newRun && none.lines.isEmpty, "no feed yet")

        let feed = try BenchLiveFeed(runDirectory: directory, start: ["pid": Int(getpid()), "rate": 50.0])
        feed.trial(rate: 50, label: "zflux")
        let second = LiveSecond(second: 0, sent: 50, acked: 49, acks: 49, p50Us: 120, p99Us: 800, maxUs: 900)
        feed.second(second, targetRate: 50, warmUp: true)
        var (newRun, lines) = reader.poll()
        #expect(newRun && kinds(lines) == ["start", "trial", "second"])
        let fields = try #require((try JSONSerialization.jsonObject(with: Data(lines[2].utf8))) as? [String: Any])
        #expect(fields["ack_p99_us"] as? Double == 800 && fields["acks"] as? Int == 49 && fields["warm_up"] as? Bool == true)
        let again = reader.poll()
        #expect(!again.newRun && again.lines.isEmpty, "nothing new")

        // A line caught half written: nothing until its newline; a line that is not JSON: skipped.
        let path = directory + "/" + BenchLiveFeed.fileName
        try appendRaw(#"{"kind":"second","sec"#, to: path)
        (newRun, lines) = reader.poll()
        #expect(!newRun && lines.isEmpty)
        try appendRaw(#"ond":1}"# + "\nnot json\n", to: path)
        (newRun, lines) = reader.poll()
        #expect(!newRun && lines == [#"{"kind":"second","second":1}"#])

        feed.report(json: #"{"sent":100}"#)
        (newRun, lines) = reader.poll()
        #expect(!newRun && lines == [#"{"kind":"report","report":{"sent":100}}"#])

        // The next run: a new file under the name, read from its start.
        let next = try BenchLiveFeed(runDirectory: directory, start: ["pid": Int(getpid()), "rate": 80.0])
        (newRun, lines) = reader.poll()
        #expect(newRun && kinds(lines) == ["start"])
        next.trial(rate: 80, label: "zflux")
        (newRun, lines) = reader.poll()
        #expect(!newRun && kinds(lines) == ["trial"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [BenchLiveFeed.fileName], "no file written aside is left")
    }

    @Test("a run whose bench process went away without its last line is said to have stopped, once; a finished run is not")
    func readerNoticesAbandonedRun() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let feed = try BenchLiveFeed(runDirectory: directory, start: ["pid": 4_000_000, "rate": 50.0])
        feed.trial(rate: 50, label: "zflux")
        var reader = BenchLiveFeedReader(runDirectory: directory)
        var alive = true
        reader.isAlive = { _ in alive }
        #expect(kinds(reader.poll().lines) == ["start", "trial"])
        #expect(reader.poll().lines.isEmpty, "still running")
        alive = false
        let (newRun, lines) = reader.poll()
        #expect(!newRun && kinds(lines) == ["failed"])
        #expect(lines.first?.contains("pid 4000000") == true && lines.first?.contains("ended without a report") == true)
        #expect(reader.poll().lines.isEmpty, "said once")

        // A run that wrote its report is over, whatever became of its process.
        _ = try BenchLiveFeed(runDirectory: directory, start: ["pid": 4_000_001])
        alive = true
        #expect(kinds(reader.poll().lines) == ["start"])
        try appendRaw(#"{"kind":"report","report":{}}"# + "\n", to: directory + "/" + BenchLiveFeed.fileName)
        alive = false
        #expect(kinds(reader.poll().lines) == ["report"])
        #expect(reader.poll().lines.isEmpty)
    }
}

import Foundation

/// The live feed of a `bench --attach` run: `bench-live.jsonl` in the attached cluster's run
/// directory, which `zflux devtools` follows. One JSON object a line, each with its `kind`:
/// - `start`: the run began (`pid`, `rate`, `duration_s`, `warm_up_s`, `workload`, `max`, `floor`);
/// - `trial`: a trial at `rate` began (`trial` counts from 1, `label` says whose: `zflux`, or the
///   C `floor`, which has no `second` lines; `--max` runs several);
/// - `second`: one second of the trial under way (``LiveSecond``: `second` from 0, `sent` and `acked`
///   so far, `acks` in that second, `ack_p50_us`, `ack_p99_us`, `ack_max_us`, `target_rate`,
///   `warm_up`);
/// - `report`: the run's report, as `--json` prints it, in `report`; the last line;
/// - `failed`: the run stopped with `error`; the last line.
///
/// Each run replaces the file (written aside, then renamed over it) with one holding its `start`
/// line, and appends the rest: a reader that finds another file under the name knows a new run began.
package final class BenchLiveFeed {
    package static let fileName = "bench-live.jsonl"
    let path: String
    private let descriptor: Int32
    private var trials = 0

    /// Starts a feed in `runDirectory`; `start` holds the `start` line's fields.
    package init(runDirectory: String, start: [String: Any]) throws {
        path = runDirectory + "/" + BenchLiveFeed.fileName
        let aside = path + ".\(getpid()).tmp"
        let descriptor = open(aside, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BenchError("cannot write \(aside): \(String(cString: strerror(errno)))") }
        self.descriptor = descriptor
        var fields = start
        fields["kind"] = "start"
        append(BenchLiveFeed.line(fields))
        // The same file, now under its name: the lines after go on through the open descriptor.
        guard rename(aside, path) == 0 else {
            let reason = String(cString: strerror(errno))
            // The descriptor is closed by deinit, which runs when an initializer throws after every
            // property is set: closing it here too would close another thread's file under that number.
            unlink(aside)
            throw BenchError("cannot write \(path): \(reason)")
        }
    }

    deinit { close(descriptor) }

    /// A trial began: `label` says whose (`zflux`, or the C `floor`).
    package func trial(rate: Double, label: String) {
        trials += 1
        append(BenchLiveFeed.line(["kind": "trial", "trial": trials, "rate": rate, "label": label]))
    }

    package func second(_ second: LiveSecond, targetRate: Double, warmUp: Bool) {
        append(
            BenchLiveFeed.line([
                "kind": "second", "trial": trials, "second": second.second, "sent": second.sent, "acked": second.acked, "acks": second.acks,
                "ack_p50_us": second.p50Us, "ack_p99_us": second.p99Us, "ack_max_us": second.maxUs, "target_rate": targetRate,
                "warm_up": warmUp,
            ]))
    }

    /// The last line: the report, as `--json` prints it.
    package func report(json: String) {
        append("{\"kind\":\"report\",\"report\":\(json)}")
    }

    /// The last line of a run that stopped on an error.
    package func failed(_ error: String) {
        append(BenchLiveFeed.line(["kind": "failed", "error": error]))
    }

    /// Each line in one write, so a reader rarely sees half of one (and waits for the rest when it does).
    private func append(_ line: String) {
        var bytes = Array((line + "\n").utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    static func line(_ fields: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// Follows a run directory's live feed: each ``poll()`` gives the whole lines written since the last,
/// and says when the file is a new run's (replaced since, or found for the first time), so the reader
/// starts over. A line still being written is held until its newline comes; a line that is not a JSON
/// object is skipped.
package struct BenchLiveFeedReader {
    let path: String
    private var file: (device: UInt64, inode: UInt64)?
    private var offset: Int64 = 0
    private var partial: [UInt8] = []
    /// The current run's bench process, while it has written neither its report nor its error.
    private var running: Int32?
    /// Whether a process is still there (a test may pretend).
    var isAlive: (Int32) -> Bool = { pid in kill(pid, 0) == 0 || errno == EPERM }
    /// The most a poll reads: a file that grew past this is read over the next polls.
    static let readLimit = 4 << 20

    package init(runDirectory: String) {
        path = runDirectory + "/" + BenchLiveFeed.fileName
    }

    /// The lines written since the last poll. A run whose bench process is gone without its last
    /// line (stopped by Ctrl-C, killed) gets one made up: `failed`, saying so.
    package mutating func poll() -> (newRun: Bool, lines: [String]) {
        // Asked before reading: a process gone by then wrote all it ever will.
        let gone = running.map { !isAlive($0) } ?? false
        let (newRun, read) = readLines()
        if newRun { running = nil }
        var lines: [String] = []
        for (line, object) in read {
            lines.append(line)
            switch object["kind"] as? String {
            case "start": running = (object["pid"] as? Int).map { Int32(truncatingIfNeeded: $0) }
            case "report", "failed": running = nil
            default: break
            }
        }
        if gone && !newRun, let pid = running {
            running = nil
            lines.append(BenchLiveFeed.line(["kind": "failed", "error": "the bench (pid \(pid)) ended without a report"]))
        }
        return (newRun, lines)
    }

    /// The whole lines written since the last read, each with its JSON object.
    private mutating func readLines() -> (newRun: Bool, lines: [(String, [String: Any])]) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return (false, []) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return (false, []) }
        let identity = (device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        var newRun = false
        if file.map({ $0 != identity }) ?? true || Int64(status.st_size) < offset {
            (file, offset, partial, newRun) = (identity, 0, [], true)
        }
        let available = Int(min(Int64(status.st_size) - offset, Int64(BenchLiveFeedReader.readLimit)))
        guard available > 0 else { return (newRun, []) }
        var buffer = [UInt8](repeating: 0, count: available)
        let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, available, off_t(offset)) }
        guard read > 0 else { return (newRun, []) }
        offset += Int64(read)
        partial += buffer[..<read]
        // Not a feed's line however long: dropped, and its rest skipped as not JSON.
        if partial.count > BenchLiveFeedReader.readLimit * 4 { partial = [] }
        var lines: [(String, [String: Any])] = []
        var start = partial.startIndex
        while let newline = partial[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = Data(partial[start..<newline])
            start = newline + 1
            if let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] {
                lines.append((String(decoding: line, as: UTF8.self), object))
            }
        }
        partial.removeSubrange(..<start)
        return (newRun, lines)
    }
}

import Foundation
import Spawn
import Synchronization

/// A child process the bench started, its stderr kept as lines; stopped (SIGTERM, then SIGKILL) when
/// the bench ends. It stays in the bench's process group, so Ctrl-C at the terminal reaches it too.
final class BenchChild {
    let name: String
    let process: ChildProcess
    let lines = LineBuffer()

    final class LineBuffer: Sendable {
        private let storage = Mutex<[String]>([])
        func append(_ new: [String]) { storage.withLock { $0.append(contentsOf: new) } }
        func withLock<R>(_ body: ([String]) -> R) -> R { storage.withLock { body($0) } }
    }

    init(name: String, executable: String, arguments: [String]) throws {
        self.name = name
        process = try ChildProcess(executable: executable, arguments: arguments, output: .discarded, errors: .piped, ownProcessGroup: false)
        let lines = lines
        process.standardError?.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else { handle.readabilityHandler = nil; return }
            let text = String(decoding: data, as: UTF8.self)
            lines.append(text.split(separator: "\n").map(String.init))
        }
    }

    /// Waits for a line of its stderr containing `text`; fails if it exits first or the deadline passes.
    func waitForLine(containing text: String, seconds: Double) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let line = lines.withLock({ $0.first { $0.contains(text) } }) { return line }
            guard process.isRunning else { break }
            usleep(10_000)
        }
        let tail = lines.withLock { $0.suffix(10).joined(separator: "\n") }
        throw BenchError("\(name) did not report '\(text)' within \(Int(seconds)) s\(tail.isEmpty ? "" : ":\n" + tail)")
    }

    func stop() { process.stop(grace: .seconds(10)) }
}

import Testing

/// Waits until `condition` holds, checking every `interval`, for at most `timeout`; when it never
/// holds, records an issue naming `what` and throws. For conditions another process or thread makes
/// true, instead of sleeping a guessed time.
///
/// The condition is always checked once more after the deadline: on a loaded machine the waiting task
/// may not run again until long after its last sleep ended, and a condition that became true meanwhile
/// must not count as a timeout. The deadline bounds a hang; it does not time the work.
public func eventually(
    _ what: String, timeout: Duration = .seconds(30), interval: Duration = .milliseconds(20),
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column,
    _ condition: () throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        let late = ContinuousClock.now >= deadline
        if try condition() { return }
        if late { break }
        try await Task.sleep(for: interval)
    }
    Issue.record(
        "timed out after \(timeout) waiting for \(what)",
        sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
    throw CancellationError()
}

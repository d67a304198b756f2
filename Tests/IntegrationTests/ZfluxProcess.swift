import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Testing

/// The built `zflux` binary: $ZFLUX_BIN, or next to the test bundle, or the package's debug build.
let zfluxBinary: String = {
    if let path = ProcessInfo.processInfo.environment["ZFLUX_BIN"] { return path }
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("zflux").path
    if FileManager.default.isExecutableFile(atPath: beside) { return beside }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/zflux").path
}()

struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `zflux ARGS` to completion (bounded) and captures its output.
/// `environment` adds variables for this child only (never `setenv`: tests run concurrently, and every
/// process another test spawns meanwhile would inherit it).
func zflux(_ arguments: [String], timeout: Duration = .seconds(30), environment: [String: String] = [:]) throws -> CommandResult {
    try runProgram(zfluxBinary, arguments, timeout: timeout, environment: environment)
}

/// Runs a program to completion (bounded), with `input` on its stdin, and captures its output.
func runProgram(
    _ path: String, _ arguments: [String], input: String? = nil, timeout: Duration = .seconds(30), environment: [String: String] = [:]
) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let inPipe = input.map { _ in Pipe() }
    process.standardInput = inPipe ?? FileHandle.nullDevice
    try process.run()
    if let inPipe, let input {
        // Written on its own queue: a child that answers before reading all its input cannot block us.
        DispatchQueue.global().async {
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try? inPipe.fileHandleForWriting.close()
        }
    }
    // Drain both pipes while the child runs, so a full pipe can never block it.
    let captured = Locked<[Int: Data]>([:])
    let readers = DispatchGroup()
    for (index, pipe) in [out, err].enumerated() {
        DispatchQueue.global().async(group: readers) {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            captured.withLock { $0[index] = data }
        }
    }
    if !process.waitForExit(timeout: timeout) {
        kill(process.processIdentifier, SIGKILL)
        Issue.record("\(URL(fileURLWithPath: path).lastPathComponent) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
    }
    process.waitUntilExit()
    _ = readers.wait(timeout: .now() + 10)
    let data = captured.withLock { $0 }
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: data[0] ?? Data(), as: UTF8.self),
        stderr: String(decoding: data[1] ?? Data(), as: UTF8.self))
}

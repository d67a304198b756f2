import ArgumentParser
import FluxCore
import Foundation
import NodeSupport

extension BenchCommand {
    /// How long each codec takes to encode and decode actions and states of growing size.
    struct Codec: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "codec",
            abstract: "Time the wire codecs (binary, binary through Codable, JSON) on the states and actions the binary gives as samples.")

        @Option(help: "Milliseconds to spend on each measurement.") var milliseconds = 300

        func run() throws {
            let samples = ZFluxCLI.Host.current.codecSamples
            guard !samples.isEmpty else { throw CLIError("\(RootCommand.binaryName) gives no codec samples (ZFluxCLI.Host.codecSamples)") }
            emitLine("codec     value                         bytes   encode µs   decode µs")
            for sample in samples { try measure(sample) }
        }

        func measure(_ sample: CodecSample) throws {
            // "codable": the binary format through Codable, for types whose generated conformance
            // (@WireCodable) "binary" takes.
            for codec in [WireCodec(.binary), WireCodec(.binary, generated: false), WireCodec(.json)] {
                let bytes = try sample.encode(codec)
                let encode = try time { _ = try sample.encode(codec) }
                let decode = try time { try sample.decode(codec, bytes) }
                // String(format:)'s %-8@ pads nothing on Linux: pad the names themselves.
                let names =
                    codec.name.padding(toLength: 8, withPad: " ", startingAt: 0) + "  "
                    + sample.name.padding(toLength: 28, withPad: " ", startingAt: 0)
                emitLine(names + String(format: " %6d  %10.2f  %10.2f", bytes.count, encode, decode))
            }
        }

        /// Mean microseconds per call over about `milliseconds`.
        func time(_ body: () throws -> Void) throws -> Double {
            let budget = UInt64(milliseconds) * 1_000_000
            let start = MonotonicClock.nowNanoseconds()
            var calls = 0
            repeat {
                try body()
                calls += 1
            } while MonotonicClock.nowNanoseconds() - start < budget
            return Double(MonotonicClock.nowNanoseconds() - start) / 1000 / Double(calls)
        }
    }
}

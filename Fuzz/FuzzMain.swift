import Foundation

// libFuzzer entry point for zflux's decoders. Built by scripts/fuzz.sh (not by SwiftPM) from the
// FluxCore and Examples sources, with the session and segment-index formats compiled in, and the
// config and workload parsers as cut-down Cluster and Bench modules over the TOML module. The targets
// themselves are in Tests/FuzzCorpusTests/FuzzTargets.swift, which the corpus test shares;
// ZFLUX_FUZZ_TARGET picks one. Every decoder must turn any input into a value or a typed error: a
// crash, a trap or an address-sanitizer report fails the run.

let target = ProcessInfo.processInfo.environment["ZFLUX_FUZZ_TARGET"] ?? "header"

func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String) { precondition(condition, message()) }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzOne(target, Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

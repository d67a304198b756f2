import Foundation
import Testing

/// The corpus input being run, named in the issue a failed check records.
enum CorpusInput {
    @TaskLocal static var name = ""
}

/// The corpus test's side of the targets' checks: a failed check is an issue of the test, named by the
/// input, and the run goes on to the next input (the fuzzer traps instead).
func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { Issue.record("\(CorpusInput.name): \(message())") }
}

@Suite("The fuzzers' committed corpus, every input through its decoder")
struct CorpusTests {
    /// Fuzz/corpus, found from this file's place in the repository.
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/corpus")

    @Test(
        "every committed input of a fuzz target gives a value or a typed error, never a trap, and passes the target's round trips",
        arguments: fuzzTargets)
    func corpus(target: String) throws {
        let directory = Self.corpus.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }.sorted()
        #expect(!names.isEmpty, "Fuzz/corpus/\(target) holds no input")
        for name in names {
            let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
            CorpusInput.$name.withValue("Fuzz/corpus/\(target)/\(name)") { fuzzOne(target, bytes) }
        }
    }

    @Test("the corpus has a directory for each target and none for a target that does not exist")
    func directoriesMatchTargets() throws {
        let directories = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).filter { !$0.hasPrefix(".") }
        #expect(Set(directories) == Set(fuzzTargets))
    }

    @Test("a check that fails is an issue naming the input: an unknown target fails its check")
    func failedCheckIsRecorded() {
        withKnownIssue {
            CorpusInput.$name.withValue("made-up") { fuzzOne("no-such-target", [1, 2, 3]) }
        } matching: { issue in
            issue.description.contains("made-up") && issue.description.contains("unknown fuzz target no-such-target")
        }
    }
}

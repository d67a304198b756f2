import ArgumentParser
import Testing

@testable import ZFluxCLI

/// Help is written as paragraphs and wrapped by ArgumentParser to the terminal's width. A paragraph
/// hard-wrapped in the source is wrapped twice on a narrower terminal ("…or uses" / "a running one…").
@Suite("Help text")
struct HelpTextTests {
    /// Every command, subcommands included.
    static func commands(_ root: any ParsableCommand.Type = RootCommand.self) -> [any ParsableCommand.Type] {
        [root] + root.configuration.subcommands.flatMap { commands($0) }
    }

    /// Lines of `text` that end mid-sentence where the next line goes on with the same sentence:
    /// a line break the source put inside a paragraph.
    static func brokenLines(_ text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var broken: [String] = []
        for (line, next) in zip(lines, lines.dropFirst()) {
            let current = line.trimmingCharacters(in: .whitespaces)
            let following = next.trimmingCharacters(in: .whitespaces)
            guard let first = following.first, let last = current.last else { continue }
            // An example command line, an option or a list item starts a line of its own.
            let example = RootCommand.binaryName + " "
            if following.hasPrefix(example) || following.hasPrefix("zflux ") || following.hasPrefix("-") || following.hasPrefix("$") { continue }
            if current.hasPrefix(example) || current.hasPrefix("zflux ") { continue }
            if first.isLowercase && !".:;!?)]}".contains(last) { broken.append("\(current) ⏎ \(following)") }
        }
        return broken
    }

    @Test("no help line ends mid-sentence at a line break of the source")
    func paragraphs() throws {
        let commands = Self.commands()
        #expect(commands.count > 20, "every command is found")
        var broken: [String] = []
        for command in commands {
            // Wide enough that ArgumentParser wraps nothing: every line break left is the source's.
            let help = RootCommand.helpMessage(for: command, columns: 10_000)
            broken += Self.brokenLines(help).map { "\(command.configuration.commandName ?? "?"): \($0)" }
        }
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test("the check catches a hard-wrapped paragraph")
    func checkFails() {
        #expect(Self.brokenLines("Starts a cluster of the ledger app), or uses\na running one with --attach.").count == 1)
        #expect(Self.brokenLines("Examples:\n  zflux bench --rate 10\n  zflux bench --max").isEmpty)
    }
}

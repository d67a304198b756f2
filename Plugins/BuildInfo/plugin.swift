import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` into the target before each build: the commit it is built from, asked of
/// git (`unknown` outside a checkout, `-modified` with uncommitted changes). The file is rewritten only
/// when its text changes, so an unchanged tree recompiles nothing.
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        // Both go into the script inside single quotes, where only a quote itself must be escaped.
        func quoted(_ path: String) -> String { path.replacingOccurrences(of: "'", with: "'\\''") }
        let root = quoted(context.package.directoryURL.path)
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        let script = """
            set -u
            out='\(quoted(output.path))'
            mkdir -p "$out"
            commit=$(git -C '\(root)' rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
            if [ "$commit" != unknown ] && [ -n "$(git -C '\(root)' status --porcelain --untracked-files=no 2>/dev/null)" ]; then
                commit="$commit-modified"
            fi
            printf '// Written by the BuildInfo plugin before each build.\\nenum BuildInfo {\\n    static let commit = "%s"\\n}\\n' "$commit" > "$out/BuildInfo.swift.new"
            if cmp -s "$out/BuildInfo.swift.new" "$out/BuildInfo.swift"; then rm -f "$out/BuildInfo.swift.new"; else mv "$out/BuildInfo.swift.new" "$out/BuildInfo.swift"; fi
            """
        return [
            .prebuildCommand(
                displayName: "zflux version and commit", executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script],
                outputFilesDirectory: output)
        ]
    }
}

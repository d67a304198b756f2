/// The one rule for a store's (and an app's) name, shared by `cluster check` and `journal import`.
///
/// A name becomes a file name (snapshots, sockets, logs), a node's command-line argument and a key in
/// the config, so it is short, ASCII, and starts with a letter or digit (`-x` would read as an option).
public enum NodeName {
    /// What the rule says, for error messages.
    public static let rule = "1–64 ASCII letters, digits, '-' or '_', starting with a letter or digit"

    public static func isValid(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII && (first.isLetter || first.isNumber) else { return false }
        return name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}

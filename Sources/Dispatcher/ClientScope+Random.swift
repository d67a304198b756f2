import NodeCores

extension ClientScope {
    /// A scope with a fresh secret (for a log that does not outlive the process). It lives with the
    /// shell: entropy, like the clock, is an input the cores never reach for.
    public static func random() -> ClientScope {
        var generator = SystemRandomNumberGenerator()
        return ClientScope(k0: generator.next(), k1: generator.next())
    }
}

import NodeSupport
import Testing

@Suite("What counts as loopback")
struct LoopbackHostTests {
    @Test("address literals in 127.0.0.0/8 and ::1, and localhost, are loopback; names that merely start like one are not")
    func parsedNotPrefixed() {
        for host in ["127.0.0.1", "127.255.3.4", "localhost", "LOCALHOST", "::1", "[::1]", "::ffff:127.0.0.1"] {
            #expect(isLoopbackHost(host), "\(host)")
        }
        for host in ["127.evil.example", "127.0.0.1.evil.example", "127.1.2.3.4", "0.0.0.0", "10.0.0.1", "::", "::2", "localhost.evil.example", ""] {
            #expect(!isLoopbackHost(host), "\(host)")
        }
    }
}

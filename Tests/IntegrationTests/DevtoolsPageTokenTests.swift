import Foundation
import Testing

/// The page of a devtools that needs a token, in a real browser: it says so before anyone dispatches,
/// tells a missing token from a wrong one, and takes the token pasted into an open tab's address.
@Suite("Devtools page with a token, in headless Chromium (real processes)", .serialized, .timeLimit(.minutes(3)))
struct DevtoolsPageTokenTests {
    @Test("without #token the page says a dispatch needs one; a wrong token is told apart; a token pasted into the open tab is taken")
    func tokenInTheAddress() async throws { try await onThread { try self.tokenInTheAddressOffThePool() } }

    /// The test, on a thread of its own (``onThread(_:)``): it blocks for a long while, which on the
    /// cooperative pool would hold one of its threads from every async test of the run.
    func tokenInTheAddressOffThePool() throws {
        // Opened at the address without its #token=….
        let page = try DevtoolsPageSession("page-token", environment: ["ZFLUX_DEVTOOLS_TOKEN": "sesame"]) {
            String($0.split(separator: "#").first ?? "")
        }
        defer { page.stop() }
        let browser = page.browser
        let result = "document.getElementById('dispatch-result').textContent"
        #expect(try browser.waitUntil("\(result).includes('needs a token')"), "said before anyone dispatched")
        func send() throws {
            _ = try browser.evaluate(
                """
                (() => { document.getElementById('dispatch-result').textContent = ''; const app = document.getElementById('dispatch-app');
                app.value = 'counter'; app.dispatchEvent(new Event('change'));
                const type = document.getElementById('dispatch-type'); type.value = 'incrementTapped'; type.dispatchEvent(new Event('change'));
                document.getElementById('dispatch-send').click(); })()
                """)
        }
        try send()
        #expect(try browser.waitUntil("\(result).startsWith('refused') && \(result).includes('needs a token')"))
        // A wrong token, pasted into the address of the open tab (which does not reload it).
        _ = try browser.evaluate("location.hash = '#token=open-sesame'")
        #expect(try browser.waitUntil("\(result).includes('a token is in the address now')"))
        try send()
        #expect(try browser.waitUntil("\(result).startsWith('refused') && \(result).includes('not one this devtools takes')"))
        // The right one pasted: the refusal of the wrong one is not left standing as if it were this one's.
        _ = try browser.evaluate("location.hash = '#token=sesame'")
        #expect(try browser.waitUntil("\(result).includes('a token is in the address now')"))
        try send()
        #expect(try browser.waitUntil("\(result).startsWith('ACK: seq ')"), "the token pasted into the open tab dispatches")
    }
}

import FluxCore
import Foundation
import Testing

@testable import ZFluxCLI

@Suite("JSON lines")
struct JSONLineTests {
    @Test("an action's app and type are quoted as JSON strings, whatever bytes a peer put in them")
    func escaped() throws {
        let message = Message(
            topic: "to\"do\n", header: Header(kind: .action, seq: 7, actionType: "add\"\\Todo"), payload: Array(#"{"title":"x"}"#.utf8))
        let line = jsonLine(message, ZFluxCLI.Host(apps: { _ in [] }))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        #expect(object["app"] as? String == "to\"do\n")
        #expect(object["type"] as? String == "add\"\\Todo")
        #expect(object["seq"] as? Int == 7)
    }
}

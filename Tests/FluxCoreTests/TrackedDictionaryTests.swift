import FluxCore
import Testing

@Suite("TrackedDictionary records only real changes")
struct TrackedDictionaryTests {
    @Test("removing a key that is not there, or setting a value that is there already, records no change; real sets and removals do")
    func onlyRealChanges() {
        var accounts = TrackedDictionary<Int, String>([1: "ada"])
        accounts.removeValue(forKey: 50)
        accounts[2] = nil
        accounts[1] = "ada"
        #expect(accounts.takeChanges().isEmpty, "nothing changed")
        accounts[1] = "grace"
        accounts[3] = "alan"
        #expect(accounts.removeValue(forKey: 3) == "alan")
        accounts.removeValue(forKey: 1)
        let changes = accounts.takeChanges()
        #expect(changes.updated.isEmpty)
        #expect(Set(changes.removed) == [1, 3])
        #expect(accounts.isEmpty)
    }
}

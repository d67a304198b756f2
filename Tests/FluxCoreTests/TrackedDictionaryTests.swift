import FluxCore
import Testing

@Suite("TrackedDictionary records only real changes")
struct TrackedDictionaryTests {
    @Test("removing a key that is not there records no change; every set and every real removal does")
    func onlyRealChanges() {
        var accounts = TrackedDictionary<Int, String>([1: "ada"])
        accounts.removeValue(forKey: 50)
        accounts[2] = nil
        #expect(accounts.takeChanges().isEmpty, "nothing changed")
        // A set is recorded even when == calls the values equal: an app's == may compare part of a value.
        accounts[1] = "ada"
        #expect(accounts.takeChanges().updated.map(\.key) == [1])
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

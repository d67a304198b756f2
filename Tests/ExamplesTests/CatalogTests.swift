import Examples
import FluxCore
import FluxTesting
import Foundation
import Testing

/// The case names of an enum type, read from the Swift runtime's reflection metadata (the field
/// descriptor every enum carries): a test's independent list of what `zflux apps` must show.
func enumCaseNames(_ type: Any.Type) -> [String]? {
    let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
    guard metadata.load(as: UInt.self) == 0x201 else { return nil }  // MetadataKind.enum
    let descriptor = metadata.load(fromByteOffset: 8, as: UnsafeRawPointer.self)
    func relative(_ base: UnsafeRawPointer) -> UnsafeRawPointer? {
        let offset = base.load(as: Int32.self)
        return offset == 0 ? nil : base + Int(offset)
    }
    // TypeContextDescriptor: flags, parent, name, access function, fields (relative pointers of 4 bytes).
    guard let fields = relative(descriptor + 16) else { return nil }
    // FieldDescriptor: type name, superclass, kind (2), record size (2), count (4), then the records.
    let recordSize = Int(fields.load(fromByteOffset: 10, as: UInt16.self))
    let count = Int(fields.load(fromByteOffset: 12, as: UInt32.self))
    return (0..<count).compactMap { index in
        let record = fields + 16 + index * recordSize
        return relative(record + 8).map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
    }
}

@Suite("The app catalog")
struct CatalogTests {
    static let actionTypes: [String: Any.Type] = [
        "todo": Todo.Action.self, "star": Star.Action.self, "filter": AnnotationFilter.Action.self, "login": Login.Action.self,
        "counter": Counter.Action.self, "stats": TodoStats.Action.self, "ledger": Ledger.Action.self, "primes": Primes.Action.self,
        "food": Food.Action.self, "drill": Drill.Action.self,
    ]

    @Test("every case of every app's Action is described, with an example the app accepts")
    func complete() throws {
        #expect(enumCaseNames(Counter.Action.self)?.sorted() == ["addTapped", "decrementTapped", "incrementTapped", "resetTapped"])
        #expect(Set(Catalog.names) == Set(Self.actionTypes.keys), "a new app needs its Action type listed here")
        for app in Catalog.apps {
            let description = app.describe()
            let type = try #require(Self.actionTypes[app.name])
            let cases = try #require(enumCaseNames(type))
            #expect(Set(description.actions.map(\.type)) == Set(cases), "\(app.name): the examples and the Action's cases differ")
            #expect(description.actions.count == cases.count, "\(app.name): one example per case")
            #expect(!description.summary.isEmpty, "\(app.name) has no summary")
            for action in description.actions {
                #expect(throws: Never.self, "\(app.name).\(action.type)'s example") {
                    _ = try app.wirePayload(type: action.type, argumentsJSON: Array(action.example.utf8))
                }
            }
        }
    }

    @Test("fields are named and typed from the code; effect-only actions are marked")
    func fields() throws {
        let todo = try #require(Catalog.app(named: "todo")).describe()
        let loaded = try #require(todo.actions.first { $0.type == "todosLoaded" })
        #expect(loaded.origin == .effect && loaded.fields == [.init(name: "todos", type: "[Item]")])
        let primes = try #require(Catalog.app(named: "primes")).describe()
        #expect(
            primes.actions.first { $0.type == "nthPrimeResponse" }?.fields == [.init(name: "n", type: "Int"), .init(name: "prime", type: "Int?")])
        #expect(try #require(Catalog.app(named: "food")).describe().reads == ["login"])
    }

    @Test("mock environments: instant, no network, no files; live ones are the default")
    func mock() async throws {
        let delivered = Locked<[(String, [UInt8])]>([])
        let foodRuntime = try #require(Catalog.app(named: "food", .init(mock: true))).makeRuntime(format: .json) { app, type, payload in
            delivered.withLock { $0.append(("\(app).\(type)", payload)) }
        }
        let login = try Login.app().wirePayload(type: "loginSucceeded", argumentsJSON: Array(#"{"user":"ada"}"#.utf8), format: .json)
        #expect(try foodRuntime.apply(app: "login", actionType: "loginSucceeded", payload: login, stamp: .unstamped, runEffects: true))
        // A bound, not a timing: the effect runs on the shared pool, which a loaded machine running every
        // suite at once may starve for seconds (a loaded run once missed a 5 s bound here).
        let deadline = ContinuousClock.now + .seconds(60)
        while delivered.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let (name, payload) = try #require(delivered.withLock { $0.first })
        #expect(name == "food.listLoaded")
        // The mock clock is stopped at 2026-01-01T00:00Z: the stand-in list is dated from it.
        guard case .listLoaded(let items) = try WireCodec().decode(Food.Action.self, from: payload) else {
            Issue.record("not a list: \(String(decoding: payload, as: UTF8.self))")
            return
        }
        #expect(items.first?.eatenAt == Date(timeIntervalSince1970: 1_767_225_600 + 7.5 * 3600))
    }
}

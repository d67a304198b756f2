import Examples
import Foundation
import Testing

@testable import FluxCore
@testable import FluxFormat

/// Values of every example app, and hand-made ones for the corners of JSONEncoder's output.
enum GenericJSONSamples {
    /// An app's states and actions, typed: what the app itself encodes.
    struct AppSample {
        var app: String
        var states: [any Encodable]
        var actions: [any Encodable]
        /// Other values the app puts on the wire (a changes-only update).
        var others: [any Encodable] = []
    }

    static let awkwardText = "say \"hi\" \\ back/slash\n\ttab\r bell\u{7} nul\u{0} us\u{1F} del\u{7F} naïve café ☕️ 😀 e\u{301} \u{2028} ÿ"

    static var apps: [AppSample] {
        var ledger = Ledger.State()
        _ = Ledger.reducer(&ledger, .open(count: 40), ())
        _ = Ledger.reducer(&ledger, .post(account: 7, amount: -250, memo: "rent \"May\" / 2026"), ())
        _ = Ledger.reducer(&ledger, .post(account: 39, amount: Int.max, memo: "ünïcødé ✓"), ())
        _ = Ledger.reducer(&ledger, .close(account: 3), ())
        let filled = ledger
        _ = ledger.takeChanges()
        _ = Ledger.reducer(&ledger, .post(account: 12, amount: 5, memo: "x"), ())
        _ = Ledger.reducer(&ledger, .close(account: 20), ())
        let changes = ledger.takeChanges()
        let day = Date(timeIntervalSince1970: 1_767_225_600.125)
        let foodItems = [
            Food.Item(name: "Crème brûlée", calories: 420, eatenAt: day),
            Food.Item(name: "Apple \"Gala\"", calories: 95, eatenAt: Date(timeIntervalSince1970: 0.1)),
            Food.Item(name: "", calories: 0, eatenAt: Date(timeIntervalSinceReferenceDate: -1e9)),
        ]
        return [
            AppSample(
                app: "todo",
                states: [
                    Todo.State(),
                    Todo.State(
                        todos: [
                            Todo.Item(title: "Buy \"oat\" milk", done: true), Todo.Item(title: awkwardText),
                            Todo.Item(title: "http://example.com/a/b?c=d&e=f"), Todo.Item(title: "日本語のタスク"),
                        ], isLoading: true, loadError: "disk /var/tmp is full"),
                    Todo.State(todos: (0..<300).map { Todo.Item(title: "todo number \($0)", done: $0 % 3 == 0) }),
                ],
                actions: [
                    Todo.Action.addTodo(title: awkwardText), .toggleTodo(index: 2), .removeTodo(index: -1), .clearCompleted, .loadTapped,
                    .todosLoaded(todos: [Todo.Item(title: "a"), Todo.Item(title: "b/c", done: true)]), .todosLoaded(todos: []),
                    .loadFailed(reason: "timed out"),
                ]),
            AppSample(
                app: "star",
                states: [Star.State(), Star.State(status: .staring, count: 3, lastError: "HTTP 500: \"nope\"")],
                actions: [Star.Action.starTapped, .starResponse(success: true), .unstarResponse(success: false)]),
            AppSample(
                app: "filter",
                states: [AnnotationFilter.State(), AnnotationFilter.State(active: [.issues, .issueOpen, .assignedToMe], openGroup: .issues)],
                actions: [
                    AnnotationFilter.Action.filterToggled(filter: .photos), .groupEntered(group: .types), .groupLeft, .resetAllTapped,
                    .resetGroupTapped(group: .issues),
                ]),
            AppSample(
                app: "login",
                states: [
                    Login.State(),
                    Login.State(username: "ada@example.com", password: "p\\a\"ss/wörd", isLoggingIn: true, loggedInAs: nil, error: "bad\npassword"),
                    Login.State(username: "ada@example.com", loggedInAs: "Ada"),
                ],
                actions: [
                    Login.Action.usernameChanged(username: "ada@example.com"), .passwordChanged(password: awkwardText), .loginTapped,
                    .loginSucceeded(user: "Ada Lovelace"), .loginFailed(reason: "refused"), .logoutTapped,
                ]),
            AppSample(
                app: "counter",
                states: [Counter.State(), Counter.State(count: -42), Counter.State(count: Int.min), Counter.State(count: Int.max)],
                actions: [
                    Counter.Action.incrementTapped, .decrementTapped, .addTapped(amount: -7), .addTapped(amount: Int.min), .resetTapped,
                ]),
            AppSample(
                app: "drill", states: [Drill.State(), Drill.State(count: 3)],
                actions: [Drill.Action.tick, .crash(note: GenericJSONSamples.awkwardText)]),
            AppSample(
                app: "stats",
                states: [TodoStats.State(), TodoStats.State(total: 5, done: 2, changes: 9, goal: 3, goalReached: false)],
                actions: [TodoStats.Action.goalSet(done: 2), .goalCleared]),
            AppSample(
                app: "ledger",
                states: [Ledger.State(), filled, ledger],
                actions: [
                    Ledger.Action.open(count: 10_000), .post(account: 42, amount: -5, memo: awkwardText), .close(account: 0),
                ],
                others: [changes]),
            AppSample(
                app: "primes",
                states: [
                    Primes.State(),
                    Primes.State(
                        count: 11,
                        favorites: [Primes.Favorite(prime: 7, savedAt: day), Primes.Favorite(prime: 11, savedAt: Date(timeIntervalSince1970: 1e-7))],
                        isNthPrimeRequestInFlight: true, alert: "The 11th prime is 31", favoritesLoaded: true),
                ],
                actions: [
                    Primes.Action.incrementTapped, .decrementTapped, .nthPrimeTapped, .nthPrimeResponse(n: 11, prime: 31),
                    .nthPrimeResponse(n: 0, prime: nil), .alertDismissed, .favoriteToggled, .favoriteRemoved(prime: 7), .loadFavoritesTapped,
                    .favoritesLoaded(favorites: [Primes.Favorite(prime: 2, savedAt: day)]), .favoritesLoaded(favorites: []),
                ]),
            AppSample(
                app: "food",
                states: [
                    Food.State(),
                    Food.State(
                        user: "ada@example.com", rows: foodItems.map { Food.Row(item: $0, eaten: "2026-01-01 07:30 UTC") }, isLoading: true,
                        error: "the service said \"later\""),
                ],
                actions: [Food.Action.refreshTapped, .listLoaded(items: foodItems), .listLoaded(items: []), .loadFailed(reason: "offline")]),
        ]
    }

    /// The corners: integer extremes, doubles and floats JSONEncoder formats in its own way, optionals,
    /// enums with associated values, empty containers, keys in every class of character.
    struct Edges: Codable {
        indirect enum Shape: Codable {
            case dot
            case line(length: Double)
            case pair(Int, String)
            case labelled(Int, name: String, inner: Shape?)
        }

        struct Keys: Codable {
            var zeta = 1, alpha = 2, under = 3, x9 = 4, x10 = 5, umlaut = 6, digit = 7, capital = 8, emoji = 9
            enum CodingKeys: String, CodingKey {
                case zeta = "Zeta", alpha, under = "_under", x9, x10, umlaut = "Ärger", digit = "9lives", capital = "ALPHA", emoji = "😀key"
            }
        }

        var smallest = Int64.min, largest = Int64.max, unsigned = UInt64.max, zero = 0
        var int8: Int8 = -128, uint8: UInt8 = 255, int32 = Int32.min, uint16 = UInt16.max, uint32 = UInt32.max, int = -1
        var doubles: [Double] = [
            0.1, 1e-7, 123_456_789.125, -0.0, 0.0, 1.0, -1.0, 1e20, 1e16, 1e15, 0x1p53, 0x1p53 + 2, 0x1p53 - 1, .leastNonzeroMagnitude,
            .greatestFiniteMagnitude,
            .leastNormalMagnitude, -2.5e-5, 100, 1.0 / 3.0, 0.001, 1e-4, 1e-5, 9.223372036854776e18, 1e21, 4.35, 2.5, -123.0,
        ]
        var floats: [Float] = [0.1, 1, -0.0, 1e-7, 3.4028235e38, 16_777_216, 16_777_218, 1e10, .leastNonzeroMagnitude, 0.3, -2.5, 8_388_607.5]
        var missing: String? = nil
        var present: Int? = 0
        var nils: [Int?] = [nil, 1, nil]
        var nestedOptional: String?? = .some(nil)
        var shapes: [Shape] = [.dot, .line(length: 0.5), .pair(-3, "p"), .labelled(1, name: "outer", inner: .labelled(2, name: "inner", inner: nil))]
        var emptyArray: [Int] = []
        var emptyMap: [String: Int] = [:]
        var emptyNested: [[String: [Int]]] = [[:], ["a": []], ["b": [1]]]
        var byName: [String: Int] = [
            "b": 1, "B": 2, "a_": 3, "a1": 4, "a10": 5, "a2": 6, "é": 7, "z": 8, "Z": 9, "_": 10, "ä": 11, "😀": 12, "ÿ": 13, "": 14,
            "a": 15, "A": 16, "0": 17, "~": 18, "\u{7F}": 19, "ab\"c": 20, "tab\t": 21, "slash/": 22, "back\\": 23, "日本": 24, "\u{1}": 26,
            "ǅ": 27, "ＡＢ": 28,
        ]
        var byNumber: [Int: String] = [10: "ten", 9: "nine", -1: "minus one", 100: "hundred", 0: "zero", Int.min: "min"]
        var byUnsigned: [UInt64: Bool] = [UInt64.max: true, 1: false]
        var date = Date(timeIntervalSince1970: 1_700_000_000.25)
        var text = GenericJSONSamples.awkwardText
        var arrayOfMaps: [[String: String]] = [["k": "v", "a": "b", "K": "V"], [:], ["only": ""]]
        var keys = Keys()
        var nested: [[[Double]]] = [[[]], [[1.5, -0.0], [1e300]]]
        var bools = [true, false]
    }
}

@Suite("GenericJSON: wire payloads as the JSON their apps print, without their types")
struct GenericJSONTests {
    /// The binary payload of `value`, read without its type, is what the wire's JSON codec writes for it
    /// (dates as numbers: without its type a `Date` is a `Double`); and that JSON, read again, is unchanged.
    func expectSameJSON<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = try JSONPayloadCodec.wire.encode(value)
        let binary = try BinaryPayloadCodec().encode(value)
        let fromBinary = try GenericJSON.json(fromWire: binary)
        #expect(String(decoding: fromBinary, as: UTF8.self) == String(decoding: expected, as: UTF8.self), sourceLocation: sourceLocation)
        let fromJSON = try GenericJSON.json(fromWire: expected)
        #expect(String(decoding: fromJSON, as: UTF8.self) == String(decoding: expected, as: UTF8.self), sourceLocation: sourceLocation)
    }

    @Test("every example app's states and actions print exactly as JSONPayloadCodec prints them")
    func exampleApps() throws {
        let samples = GenericJSONSamples.apps
        #expect(Set(samples.map(\.app)) == Set(Catalog.names), "one sample per example app")
        for sample in samples {
            for state in sample.states { try expectSameJSON(state) }
            for action in sample.actions { try expectSameJSON(action) }
            for other in sample.others { try expectSameJSON(other) }
        }
    }

    @Test("integer extremes, doubles, floats, optionals, enums, empty containers and every kind of key")
    func edges() throws {
        try expectSameJSON(GenericJSONSamples.Edges())
        try expectSameJSON(GenericJSONSamples.Edges.Keys())
        let json = try GenericJSON.json(fromWire: try BinaryPayloadCodec().encode(GenericJSONSamples.Edges()))
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(#""smallest":-9223372036854775808"#) && text.contains(#""unsigned":18446744073709551615"#))
        #expect(text.contains(#""nestedOptional":null"#) && !text.contains("missing"), "nil is written only where JSONEncoder writes it")
        // Scalars at the top level, and the values JSONEncoder gives its own form.
        for value: Double in [1.0, 0.1, 1e-7, 123_456_789.125, -0.0, 1e20] { try expectSameJSON(value) }
        for value: Float in [0.1, 1, -0.0, 1e20] { try expectSameJSON(value) }
        try expectSameJSON(Int64.min)
        try expectSameJSON(UInt64.max)
        try expectSameJSON("")
        try expectSameJSON(GenericJSONSamples.awkwardText)
        try expectSameJSON(true)
        try expectSameJSON([String]())
        try expectSameJSON([String: [Int]]())
        try expectSameJSON(Optional<Int>.none)
        try expectSameJSON(Date(timeIntervalSinceReferenceDate: 0.1))
    }

    @Test("keys come in UTF-8 byte order, as JSONEncoder's .sortedKeys orders them on Linux")
    func keyOrder() throws {
        let keys = ["b", "B", "a10", "a2", "a_", "é", "Z", "_", "😀", "", "0", "ǅ", "ＡＢ"]
        let dictionary = Dictionary(uniqueKeysWithValues: keys.map { ($0, 1) })
        let expected = #"{"":1,"0":1,"B":1,"Z":1,"_":1,"a10":1,"a2":1,"a_":1,"b":1,"é":1,"ǅ":1,"ＡＢ":1,"😀":1}"#
        #expect(String(decoding: try JSONPayloadCodec().encode(dictionary), as: UTF8.self) == expected, "what Foundation does here")
        #expect(String(decoding: try GenericJSON.json(fromWire: try BinaryPayloadCodec().encode(dictionary)), as: UTF8.self) == expected)
    }

    @Test("thousands of random doubles, floats and integers print as JSONEncoder prints them")
    func randomNumbers() throws {
        var random = SplitMix64(seed: 0x6A50_4E)
        var doubles: [Double] = []
        var floats: [Float] = []
        while doubles.count < 4000 {
            let double = Double(bitPattern: random.next())
            if double.isFinite { doubles.append(double) }
            let float = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
            if float.isFinite { floats.append(float) }
        }
        for exponent in -30...30 {
            let scale = pow(10, Double(exponent))
            doubles += [scale, -scale, scale * 1.5, (Double(random.next() % 1_000_000) * scale).rounded()]
            floats += [Float(scale), Float(scale) * 1.25]
        }
        // Whole numbers around 2^53 (doubles) and 2^24 (floats), where the formatting changes.
        for offset in -4...4 {
            doubles.append(0x1p53 + Double(offset * 2))
            floats.append(0x1p24 + Float(offset * 2))
        }
        doubles += (0..<500).map { _ in Double(Int64(bitPattern: random.next()) >> Int64(random.next() % 64)) }
        try expectSameJSON(doubles)
        try expectSameJSON(floats)
        try expectSameJSON((0..<2000).map { _ in Int64(bitPattern: random.next()) >> Int64(random.next() % 64) })
        try expectSameJSON((0..<2000).map { _ in random.next() >> (random.next() % 64) })
    }

    @Test("JSON payloads are re-serialised: keys sorted, whitespace dropped, escapes and numbers in JSONEncoder's form")
    func jsonInput() throws {
        func transcode(_ text: String) throws -> String { String(decoding: try GenericJSON.json(fromWire: Array(text.utf8)), as: UTF8.self) }
        #expect(
            try transcode(#" { "b" : 1 , "a" : [ 1.50 , -0 , 1E2 , 2.5e-5, "\u00e9\/\"\u0001\ud83d\ude00" ], "A": {"z": null, "y": true} } "#)
                == #"{"A":{"y":true,"z":null},"a":[1.5,-0,100,2.5e-05,"é/\"\u0001😀"],"b":1}"#)
        #expect(try transcode("18446744073709551615") == "18446744073709551615")
        #expect(try transcode("-9223372036854775808") == "-9223372036854775808")
        #expect(try transcode("18446744073709551616") == "1.8446744073709552e+19", "past UInt64: a Double, as JSONDecoder reads it")
        #expect(try transcode(#"{"a":1,"a":2}"#) == #"{"a":2}"#, "the last of equal keys wins, as in JSONEncoder")
        #expect(try transcode(#"["\t"]"#) == #"["\t"]"#)
        #expect(try transcode(#"{}"#) == "{}" && (try transcode(" [ ] ")) == "[]")
        // What JSONEncoder wrote for a Float or a Double stays; other forms become the Double's.
        #expect(try transcode("[1.6777218e+07,1e+10,16777218,1.0,1e10,0.10,1E-7]") == "[1.6777218e+07,1e+10,16777218,1,10000000000,0.1,1e-07]")
    }

    @Test("the JSONValue convenience reads both codecs")
    func jsonValue() throws {
        let state = Todo.State(todos: [Todo.Item(title: "tea", done: true)])
        let value = try GenericJSON.value(fromWire: try BinaryPayloadCodec().encode(state))
        #expect(value == JSONValue(parsing: try JSONPayloadCodec().encode(state)))
        #expect(try GenericJSON.value(fromWire: Array(#"{"n":[1,"x",null]}"#.utf8)) == .object(["n": .array([.number(1), .string("x"), .null])]))
    }

    @Test("truncated, malformed and hostile payloads throw a clear error, and none traps")
    func garbage() throws {
        func failure(_ bytes: [UInt8]) -> GenericJSONError? {
            do {
                _ = try GenericJSON.json(fromWire: bytes)
                return nil
            } catch {
                return error
            }
        }
        func code(_ bytes: [UInt8]) -> GenericJSONError.Code? { failure(bytes)?.code }
        let bytes = try BinaryPayloadCodec().encode(GenericJSONSamples.Edges())
        for cut in 0..<bytes.count { #expect(code(Array(bytes.prefix(cut))) != nil, "cut at \(cut)") }
        #expect(code(bytes + [0]) == .malformed, "a trailing byte")
        // Every single-byte change is refused or transcodes; none traps.
        for index in bytes.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var changed = bytes
                changed[index] ^= flip
                _ = code(changed)
            }
        }
        var random = SplitMix64(seed: 7)
        for _ in 0..<2000 {
            let noise = [BinaryPayloadCodec.marker] + (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next() % 12) }
            _ = code(noise)
        }
        let marker = BinaryPayloadCodec.marker
        #expect(code([marker]) == .truncated)
        #expect(code([marker, 0x0A]) == .malformed, "an unknown tag")
        #expect(code([marker, 0x07, 0x01, 0xFF]) == .invalidUTF8)
        #expect(code([marker, 0x07, 0x02, 0xC3]) == .truncated, "a string longer than the bytes")
        #expect(code([marker, 0x07, 0x03, 0xE0, 0x80, 0x80]) == .invalidUTF8, "an overlong form")
        #expect(code([marker, 0x07, 0x03, 0xED, 0xA0, 0x80]) == .invalidUTF8, "a surrogate")
        #expect(code([marker, 0x04] + [UInt8](repeating: 0xFF, count: 10) + [0x01]) == .malformed, "a varint wider than 64 bits")
        #expect(code([marker, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]) == .truncated, "a length past the end")
        #expect(code([marker, 0x08, 1, 0, 0, 0, 5, 0, 0, 0, 0x00]) == .malformed, "a count larger than the content")
        #expect(code([marker, 0x08, 2, 0, 0, 0, 1, 0, 0, 0, 0x00, 0x00]) == .malformed, "a container holding more than its count")
        #expect(code([marker, 0x09, 2, 0, 0, 0, 1, 0, 0, 0, 0x01, 0x61]) == .truncated, "a key whose value is missing")
        #expect(code([marker, 0x05] + withUnsafeBytes(of: Double.nan.bitPattern.littleEndian) { Array($0) }) == .notRepresentable)
        #expect(code([marker, 0x06] + withUnsafeBytes(of: Float.infinity.bitPattern.littleEndian) { Array($0) }) == .notRepresentable)
        #expect(code([marker, 0x05, 0, 0]) == .truncated)
        // Nesting past the limit, in both codecs.
        var deep: [UInt8] = [0x00]
        for _ in 0..<(GenericJSON.maximumDepth + 1) {
            let length = UInt32(deep.count)
            deep = [0x08] + withUnsafeBytes(of: length.littleEndian) { Array($0) } + [1, 0, 0, 0] + deep
        }
        #expect(code([marker] + deep) == .tooDeep)
        #expect(code(Array((String(repeating: "[", count: 600) + String(repeating: "]", count: 600)).utf8)) == .tooDeep)
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(code(Array(fine.utf8)) == nil)
        // JSON that does not parse.
        for text in [
            "", " ", "{", "[1,]", #"{"a":}"#, #"{"a" 1}"#, #"{a:1}"#, "\"abc", "01", "1.", "-", "1e", "tru", "nul", "1 2", #""\ud800""#,
            #""\udc00""#, #""\ud800\u0041""#, "\"\u{1}\"", #""\x""#, #""\u12G4""#, "[1}", "{\"a\":1]", "1e400", "NaN",
        ] {
            #expect(code(Array(text.utf8)) != nil, "\(text)")
        }
        #expect(code([0x22, 0xFF, 0x22]) == .invalidUTF8)
        let error = try #require(failure([marker, 0x07, 0x09, 0x61]))
        #expect(error.description.contains("runs past its end") && error.offset == 2, "\(error)")
    }

    @Test("the indented form is the same JSON, laid out for people")
    func pretty() throws {
        let bytes = try BinaryPayloadCodec().encode(Todo.State(todos: [Todo.Item(title: "a, [b]: {c}")], loadError: "x"))
        let text = try GenericJSON.prettyText(fromWire: bytes)
        #expect(
            text == """
                {
                  "isLoading": false,
                  "loadError": "x",
                  "todos": [
                    {
                      "done": false,
                      "title": "a, [b]: {c}"
                    }
                  ]
                }
                """)
        #expect(
            try GenericJSON.prettyText(fromWire: try BinaryPayloadCodec().encode(Todo.State())) == "{\n  \"isLoading\": false,\n  \"todos\": []\n}")
    }
}

@Suite("UnhostedApp: an app known only by its name")
struct UnhostedAppTests {
    @Test("it prints every example app's states and actions exactly as the app itself does")
    func sameAsTheApp() throws {
        for sample in GenericJSONSamples.apps {
            let app = try #require(Catalog.app(named: sample.app))
            let unhosted = UnhostedApp(name: sample.app)
            for state in sample.states {
                for bytes in [try BinaryPayloadCodec().encode(state), try JSONPayloadCodec.wire.encode(state)] {
                    // Without its type a date is its number; the app itself prints it as an ISO 8601 text.
                    let printed = try unhosted.stateJSON(fromWire: bytes)
                    #expect(printed == (try JSONPayloadCodec.wire.encode(state)), "\(sample.app)")
                    if let ledger = state as? Ledger.State {
                        // Its accounts are a list in the order of a Swift dictionary, which a decoded copy does
                        // not keep: the app's own print of its decoded state holds the same accounts, in
                        // another order.
                        let own = try app.stateJSON(fromWire: bytes)
                        #expect(try JSONPayloadCodec().decode(Ledger.State.self, from: own) == ledger)
                        #expect(try JSONPayloadCodec().decode(Ledger.State.self, from: printed) == ledger)
                    } else {
                        #expect(try app.stateJSON(fromWire: bytes) == (try JSONPayloadCodec().encode(state)), "\(sample.app)")
                    }
                }
            }
            for action in sample.actions {
                let bytes = try BinaryPayloadCodec().encode(action)
                #expect(try unhosted.actionJSON(fromWire: bytes) == (try JSONPayloadCodec.wire.encode(action)))
                #expect(try app.actionJSON(fromWire: bytes) == (try JSONPayloadCodec().encode(action)))
            }
        }
    }

    @Test("it sends JSON actions for the dispatcher to judge, and refuses what needs the app's code")
    func refusals() throws {
        let app = UnhostedApp(name: "poll")
        #expect(app.reads.isEmpty)
        try app.check(actionType: "anything", payload: [1, 2, 3])
        let payload = try app.wirePayload(type: "voteCast", argumentsJSON: Array(#"{"option":2}"#.utf8), format: .binary)
        #expect(String(decoding: payload, as: UTF8.self) == #"{"voteCast":{"option":2}}"#, "JSON whatever the format")
        #expect(throws: ActionError.self) { try app.wirePayload(type: "voteCast", argumentsJSON: Array("[1]".utf8)) }
        #expect(throws: ActionError("app poll is not hosted by this binary")) {
            try app.admit(actionType: "voteCast", payload: payload, client: 1, host: RecordingMiddlewareHost())
        }
        let description = app.describe()
        #expect(description.name == "poll" && description.actions.isEmpty && description.summary.contains("not hosted by this binary"))

        let runtime = app.makeRuntime(format: .binary) { _, _, _ in }
        #expect(throws: ActionError("app poll is not hosted by this binary")) {
            try runtime.apply(app: "poll", actionType: "voteCast", payload: payload, stamp: .unstamped, runEffects: true)
        }
        #expect(try runtime.apply(app: "todo", actionType: "addTodo", payload: payload, stamp: .unstamped, runEffects: true) == false)
        #expect(try GenericJSON.json(fromWire: try runtime.encodedState()) == Array("{}".utf8))
        #expect(WireCodec.isBinary(try runtime.encodedState()))
        #expect(try runtime.takeChanges() == nil)
        #expect(throws: (any Error).self) { try runtime.loadState(try runtime.encodedState()) }

        let replica = app.makeReplica(format: .json)
        #expect(try replica.encodedState() == Array("{}".utf8))
        let state = try BinaryPayloadCodec().encode(Counter.State(count: 3))
        try replica.load(state)
        #expect(try replica.encodedState() == state)
        #expect(throws: (any Error).self) { try replica.apply(changes: state) }
        #expect(try replica.encodedState() == state)
        #expect(try app.render(wire: state) == "{\n  \"count\": 3\n}")
    }
}

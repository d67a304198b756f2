import FluxCore
import Foundation
import TOML
import Testing

@Suite("The TOML parser")
struct TOMLParserTests {
    func parse(_ text: String) throws -> TOMLTable { try TOMLParser.parse(text) }

    /// The error's line and message for `text`, which must not parse.
    func refusal(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> TOMLError? {
        do {
            let table = try TOMLParser.parse(text)
            Issue.record("parsed \(text.debugDescription) as \(table)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    @Test("reads every kind of value TOML 1.0 has, keeping integers apart from floats and keys in order")
    func values() throws {
        let table = try parse(
            #"""
            # a comment
            title = "a \"quoted\" \\ \u00e9 \U0001F600 tab\t"
            literal = 'C:\no\escape'
            multi = """
            one
            two \
                  three"""
            quotes = """a""b"""""
            raw = '''
            keeps \n as written'''
            ints = [ 1_000, +7, -0, 0xDEAD_beef, 0o17, 0b101 ]
            floats = [ 1.5, -2e3, 6.02E+23, 1_0.2_5, inf, -inf ]
            bools = [true, false,]   # trailing comma
            dates = [1979-05-27T07:32:00Z, 1979-05-27 00:32:00.999-07:00, 1979-05-27T07:32:00, 1979-05-27, 07:32:00.5]
            nested = [[1, 2], ["a"], []]
            point = { x = 1, y.z = "two", "quoted key" = {} }
            "dotted.name".bare-key_1 = 1
            """#)
        #expect(table.keys == ["title", "literal", "multi", "quotes", "raw", "ints", "floats", "bools", "dates", "nested", "point", "dotted.name"])
        #expect(table["title"] == .string("a \"quoted\" \\ é 😀 tab\t"))
        #expect(table["literal"] == .string(#"C:\no\escape"#))
        #expect(table["multi"] == .string("one\ntwo three"))
        #expect(table["quotes"] == .string("a\"\"b\"\""))
        #expect(table["raw"] == .string(#"keeps \n as written"#))
        #expect(table["ints"] == .array([.integer(1000), .integer(7), .integer(0), .integer(0xDEAD_BEEF), .integer(15), .integer(5)]))
        #expect(table["floats"] == .array([.float(1.5), .float(-2000), .float(6.02e23), .float(10.25), .float(.infinity), .float(-.infinity)]))
        #expect(table["bools"] == .array([.bool(true), .bool(false)]))
        #expect(
            table["dates"]
                == .array([
                    .dateTime("1979-05-27T07:32:00Z"), .dateTime("1979-05-27T00:32:00.999-07:00"), .dateTime("1979-05-27T07:32:00"),
                    .dateTime("1979-05-27"), .dateTime("07:32:00.5"),
                ]))
        #expect(table["nested"] == .array([.array([.integer(1), .integer(2)]), .array([.string("a")]), .array([])]))
        var y = TOMLTable()
        y["z"] = .string("two")
        var point = TOMLTable()
        point["x"] = .integer(1)
        point["y"] = .table(y)
        point["quoted key"] = .table(TOMLTable())
        #expect(table["point"] == .table(point))
        #expect(table["dotted.name"]?.table?["bare-key_1"] == .integer(1))
    }

    @Test("tables, arrays of tables and dotted keys build one tree, with CRLF line ends and a byte-order mark")
    func tables() throws {
        let table = try parse(
            "\u{FEFF}[a.b]\r\nc = 1\r\n[[store]]\r\nname = \"x\"\r\n[store.environment]\r\nk = 'v'\r\n[[store]]\r\nname = \"y\"\r\n"
                + "[[store.port]]\r\nn = 1\r\n[fruit]\r\napple.color = \"red\"\r\n[fruit.apple.texture]\r\nsmooth = true\r\n[a]\r\nd = 2\r\n")
        #expect(table.keys == ["a", "store", "fruit"])
        #expect(table["a"]?.table?["b"]?.table?["c"] == .integer(1))
        #expect(table["a"]?.table?["d"] == .integer(2))
        let stores = try #require(table["store"]?.array)
        #expect(stores.count == 2)
        #expect(stores[0].table?["environment"]?.table?["k"] == .string("v"))
        #expect(stores[1].table?["port"]?.array?.first?.table?["n"] == .integer(1))
        #expect(table["fruit"]?.table?["apple"]?.table?["texture"]?.table?["smooth"] == .bool(true))
    }

    @Test("refuses what TOML does not allow, with the line where it is")
    func refusals() throws {
        let cases: [(String, Int, String)] = [
            ("a = 1\na = 2", 2, "defined twice"),
            ("[t]\n[t]", 2, "defined twice"),
            ("[t]\nx.y = 1\n[t.x]", 3, "dotted keys"),
            ("[t.x]\ny = 1\n[t]\nx.z = 1", 4, "defined already"),
            ("p = { x = 1 }\n[p]", 2, "defined already"),
            ("p = { x = 1 }\np.y = 2", 2, "goes through"),
            ("a = [1]\n[[a]]", 2, "defined already"),
            ("[[a]]\n[a]", 2, "array of tables"),
            ("a = \"\\q\"", 1, "not an escape"),
            ("a = \"\\u12\"", 1, "hex digits"),
            ("a = \"\\uD800\"", 1, "Unicode scalar"),
            ("a = 012", 1, "not a value"),
            ("a = 1__0", 1, "not a value"),
            ("a = 1.", 1, "not a value"),
            ("a = 99999999999999999999", 1, "integers are 64-bit"),
            ("a = 1979-02-30", 1, "not a value"),
            ("a = 1\rb = 2", 1, "carriage return"),
            ("a = \"open", 1, "not closed"),
            ("a = 'one\ntwo'", 1, "line break"),
            ("a = \"bell\u{07}\"", 1, "control character"),
            ("# bell \u{07}", 1, "control character"),
            ("a = 1 b = 2", 1, "end of the line"),
            ("a = { x = 1,\n y = 2 }", 1, "own line"),
            ("a = { x = 1, }", 1, "expected a key"),
            ("a = [1 2]", 1, "expected , or ]"),
            ("a =", 1, "expected a value"),
            ("[a", 1, "must end with ]"),
            ("[[a]", 1, "must end with ]]"),
            ("[]", 1, "expected a key"),
            ("= 1", 1, "expected a key"),
            ("a = truex", 1, "a string goes in quotes (\"truex\")"),
            ("transport = tcp", 1, "a string goes in quotes (\"tcp\")"),
            // What libFuzzer found toml++ (the C++ parser zflux used before) aborting on: each is now a
            // plain refusal (Fuzz/corpus/config and Fuzz/corpus/workload keep them).
            ("[cluster]\nname =[ }f,", 2, "expected a value"),
            ("[\r[store]]", 1, "expected a key"),
            ("\u{FEFF}[Ò]", 1, "expected a key"),
            ("[= \"x\"]", 1, "expected a key"),
        ]
        for (text, line, words) in cases {
            guard let error = refusal(text) else { continue }
            #expect(error.line == line, "\(text.debugDescription): \(error.message)")
            #expect(error.message.contains(words), "\(text.debugDescription): \(error.message)")
        }
    }

    @Test("nesting deeper than its limit is refused, not a stack overflow")
    func depth() throws {
        for open in ["[", "{ a = "] {
            let error = refusal("x = " + String(repeating: open, count: 100_000))
            #expect(error?.message.contains("nested deeper") == true)
        }
        _ = try parse("x = " + String(repeating: "[", count: TOMLParser.maxDepth) + String(repeating: "]", count: TOMLParser.maxDepth))
        // Keys of many parts nest tables as deep (a dotted key, a header): refused the same way.
        for text in [String(repeating: "a.", count: 200_000) + "a = 1", "[" + String(repeating: "a.", count: 200_000) + "a]"] {
            #expect(refusal(text)?.message.contains("more than \(TOMLParser.maxDepth) parts") == true)
        }
        _ = try parse(String(repeating: "a.", count: TOMLParser.maxDepth - 1) + "a = 1")
    }

    @Test("tables a dotted key or a header nests count with the values around them: inline tables of 63-part keys are refused with their line")
    func depthAcrossKeys() throws {
        // Each limit alone held, but 63 inline tables of 63-part keys nest ~4,000 tables, which
        // Foundation's JSON reader refused with no line ("The given data was not valid JSON").
        let key = String(repeating: "a.", count: TOMLParser.maxDepth - 2) + "a"
        let deep = String(repeating: "{ \(key) = ", count: 63) + "1" + String(repeating: " }", count: 63)
        let error = refusal("[cluster]\nname = \"x\"\nx = \(deep)\n")
        #expect(error?.line == 3)
        #expect(error?.message.contains("nested deeper than \(TOMLParser.maxDepth)") == true, "\(String(describing: error))")
        // A header's parts, a dotted key's, an array of tables' entries and arrays add up the same way:
        // a table of 40 parts holds a 20-part key whose value may open four arrays, not five.
        let header = "[" + String(repeating: "h.", count: 39) + "h]\n" + String(repeating: "k.", count: 19) + "k = "
        _ = try parse(header + "[[[[1]]]]")
        #expect(refusal(header + "[[[[[1]]]]]")?.message.contains("nested deeper") == true)
        let long = "[t." + String(repeating: "h.", count: 62) + "h]"
        _ = try parse("[t]\n" + long)
        #expect(refusal("[[t]]\n" + long)?.line == 2)
    }

    @Test("any table it writes reads back equal (2,000 generated tables)")
    func roundTrip() throws {
        var random = SplitMix64(seed: 35)
        func pick(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        let alphabet = Array("ab\"\\\n\t'#=[]{}é😀\u{01}\u{7F}")
        let keys = ["a", "b-c", "d_1", "with space", "dot.ted", "é", "", "\"q\"", "line\nbreak", "7"]
        func scalar() -> TOMLValue {
            switch pick(6) {
            case 0: .integer(Int64(bitPattern: random.next()) >> pick(64))
            case 1: .float(Double(Int64(bitPattern: random.next()) >> 20) / Double(1 << pick(30)))
            case 2: .bool(pick(2) == 0)
            case 3: .dateTime(["1979-05-27T07:32:00Z", "2026-11-26", "23:59:60.125", "2000-02-29T00:00:00+05:30"][pick(4)])
            default: .string(String((0..<pick(8)).map { _ in alphabet[pick(alphabet.count)] }))
            }
        }
        func value(_ depth: Int) -> TOMLValue {
            switch depth > 3 ? 0 : pick(4) {
            case 0, 1: scalar()
            case 2: .array((0..<pick(4)).map { _ in value(depth + 1) })
            default: .table(table(depth + 1))
            }
        }
        func table(_ depth: Int) -> TOMLTable {
            var out = TOMLTable()
            for _ in 0..<pick(5) {
                let key = keys[pick(keys.count)]
                out[key] = pick(5) == 0 && depth < 3 ? .array((0..<1 + pick(3)).map { _ in .table(table(depth + 1)) }) : value(depth)
            }
            return out
        }
        for _ in 0..<2_000 {
            let original = table(0)
            var text = ""
            TOMLValue.write(original, path: [], to: &text)
            let read = try parse(text)
            #expect(read == original, "\(text)")
            if read != original { break }
        }
    }

    @Test("TOMLDecoder and TOMLEncoder carry a Codable value both ways, and name the key of a wrong type")
    func coding() throws {
        struct Section: Codable, Equatable {
            var port: Int
            var ratio: Double?
            var tags: [String]
            var limits: [String: Int]?
        }
        struct Document: Codable, Equatable {
            var name: String
            var words: [String]
            var ratios: [Double]
            var on: Bool
            var section: Section
            var entries: [Section]
        }
        let value = Document(
            name: "a \"b\"\nc", words: ["inf", "-inf", "nan"], ratios: [.infinity, -.infinity], on: true,
            section: Section(port: 1, ratio: 0.5, tags: ["x"], limits: ["app.type": 3]),
            entries: [Section(port: 2, ratio: nil, tags: [], limits: nil), Section(port: 3, ratio: 1e300, tags: ["y", "z"], limits: [:])])
        let text = try TOMLEncoder().encode(value)
        #expect(text.contains("[[entries]]"))
        #expect(try TOMLDecoder().decode(Document.self, from: text) == value)
        #expect(throws: DecodingError.self) {
            try TOMLDecoder().decode(Document.self, from: text.replacingOccurrences(of: "port = 2", with: "port = \"2\""))
        }
        #expect(throws: TOMLError.self) { try TOMLDecoder().decode(Document.self, from: "name = ") }
    }
}

/// `Decodable` over the binary format: a thin adapter that reads through ``WireReader`` at offsets, each
/// container keeping its own position, and gives its errors the coding path.
///
/// The decoder and its containers share one reader through this reference: each of them stays one word
/// wide in it, small enough to sit in its existential without a box of its own, and reads in place.
final class SharedReader {
    let reader: WireReader

    init(_ bytes: [UInt8]) { reader = WireReader(bytes) }

    /// The value of type `T` at `offset`, with fast paths for the common scalars.
    func decodeValue<T: Decodable>(_ type: T.Type, at offset: Int, codingPath: @autoclosure () -> [any CodingKey]) throws -> T {
        // Each test compares two types' metadata, and each value is the type the test matched T against:
        // no dynamic cast on either side (`case is String.Type` and `as! T` were one each, on every value).
        if T.self == String.self { return unsafeBitCast(try reader.string(at: offset, codingPath()).0, to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try reader.integer(Int.self, at: offset, codingPath()).0, to: T.self) }
        if T.self == UInt64.self { return unsafeBitCast(try reader.integer(UInt64.self, at: offset, codingPath()).0, to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try reader.bool(at: offset, codingPath()), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try reader.double(at: offset, codingPath()).0, to: T.self) }
        return try T(from: _BinaryDecoder(shared: self, offset: offset, codingPath: codingPath()))
    }
}

struct _BinaryDecoder: Decoder {
    let shared: SharedReader
    let offset: Int
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let (first, count, end) = try shared.reader.container(.map, at: offset, codingPath)
        return KeyedDecodingContainer(BinaryKeyedDecoder<Key>(shared: shared, first: first, count: count, end: end, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (first, count, _) = try shared.reader.container(.array, at: offset, codingPath)
        return BinaryUnkeyedDecoder(shared: shared, cursor: first, count: count, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecoder(shared: shared, offset: offset, codingPath: codingPath)
    }
}

/// Looks keys up starting where the previous one was found, so fields read in the order they were
/// written (as synthesized conformances do) cost one comparison each.
///
/// A struct: `KeyedDecodingContainer` boxes it, and the box holds it in place, so a container costs one
/// allocation, not two. Where the next look-up starts is all it changes as it reads, kept in a
/// ``KeyCursor`` made only for a map of more than one entry (an enum's map has one).
struct BinaryKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let shared: SharedReader
    let first: Int
    let count: Int
    let end: Int
    var codingPath: [any CodingKey]
    /// The next entry to look at; nil for a map of one entry (or none), where each look-up starts at it.
    private let cursor: KeyCursor?

    init(shared: SharedReader, first: Int, count: Int, end: Int, codingPath: [any CodingKey]) {
        self.shared = shared
        self.first = first
        self.count = count
        self.end = end
        self.codingPath = codingPath
        self.cursor = count > 1 ? KeyCursor(offset: first) : nil
    }

    var allKeys: [Key] {
        // Synthesized enum decoding asks for the keys twice (to count them, then to switch on the
        // first): an enum's map holds one entry, read again each time, which is cheaper than keeping it.
        // Its one key goes in an array literal: in code generic over `Key`, appending to an empty array
        // looks the array's type up at run time twice, a literal once.
        if count == 1 {
            guard let (start, keyEnd) = try? shared.reader.run(at: first, codingPath),
                (try? shared.reader.valueEnd(at: keyEnd, codingPath)) != nil,
                let key = Key(stringValue: String(decoding: shared.reader.bytes[start..<keyEnd], as: UTF8.self))
            else { return [] }
            return [key]
        }
        var keys: [Key] = []
        var offset = first
        for _ in 0..<count {
            guard let (start, keyEnd) = try? shared.reader.run(at: offset, codingPath),
                let next = try? shared.reader.valueEnd(at: keyEnd, codingPath)
            else { break }
            if let key = Key(stringValue: String(decoding: shared.reader.bytes[start..<keyEnd], as: UTF8.self)) { keys.append(key) }
            offset = next
        }
        return keys
    }

    /// The offset of the value stored under `key`, or nil.
    private func find(_ key: Key) throws -> Int? {
        guard count > 0 else { return nil }
        let name = key.stringValue
        var offset = cursor?.offset ?? first, index = cursor?.index ?? 0
        for _ in 0..<count {
            if index == count { offset = first; index = 0 }
            let (equal, valueAt) = try shared.reader.keyEquals(at: offset, name, codingPath)
            let next = try shared.reader.valueEnd(at: valueAt, codingPath)
            guard next <= end else { throw shared.reader.corrupted("entry past its container", codingPath) }
            index += 1
            if equal {
                if let cursor {
                    cursor.offset = next
                    cursor.index = index
                }
                return valueAt
            }
            offset = next
        }
        return nil
    }

    private func value(_ key: Key) throws -> Int {
        guard let offset = try find(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value for '\(key.stringValue)'"))
        }
        return offset
    }

    func contains(_ key: Key) -> Bool {
        let saved = cursor?.saved
        defer { cursor?.restore(saved) }
        return (try? find(key)) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        let saved = cursor?.saved
        guard let offset = try find(key) else { return true }
        let isNil = try shared.reader.isNil(at: offset, codingPath)
        // A non-nil value is about to be decoded: look it up again from the same place.
        if !isNil { cursor?.restore(saved) }
        return isNil
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try shared.reader.bool(at: value(key), codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try shared.reader.string(at: value(key), codingPath + [key]).0 }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try shared.reader.double(at: value(key), codingPath + [key]).0 }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try shared.reader.float(at: value(key), codingPath + [key]).0 }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try shared.reader.integer(type, at: value(key), codingPath + [key]).0 }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try shared.reader.integer(type, at: value(key), codingPath + [key]).0 }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try shared.reader.integer(type, at: value(key), codingPath + [key]).0 }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try shared.reader.integer(type, at: value(key), codingPath + [key]).0 }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try shared.reader.integer(type, at: value(key), codingPath + [key]).0 }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try shared.reader.integer(type, at: value(key), codingPath + [key]).0 }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try shared.reader.integer(type, at: value(key), codingPath + [key]).0 }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try shared.reader.integer(type, at: value(key), codingPath + [key]).0 }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try shared.reader.integer(type, at: value(key), codingPath + [key]).0 }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try shared.reader.integer(type, at: value(key), codingPath + [key]).0 }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try shared.decodeValue(type, at: value(key), codingPath: codingPath)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try _BinaryDecoder(shared: shared, offset: value(key), codingPath: codingPath).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try _BinaryDecoder(shared: shared, offset: value(key), codingPath: codingPath).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        guard let key = Key(stringValue: "super") else {
            // `Key` has no "super" case: find the entry by name all the same.
            var offset = first
            for _ in 0..<count {
                let (equal, valueAt) = try shared.reader.keyEquals(at: offset, "super", codingPath)
                if equal { return _BinaryDecoder(shared: shared, offset: valueAt, codingPath: codingPath) }
                offset = try shared.reader.valueEnd(at: valueAt, codingPath)
            }
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "no value for 'super'"))
        }
        return try superDecoder(forKey: key)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        _BinaryDecoder(shared: shared, offset: try value(key), codingPath: codingPath)
    }
}

/// Where a ``BinaryKeyedDecoder`` of more than one entry looks next: the entry's offset and its index.
final class KeyCursor {
    var offset: Int
    var index = 0

    init(offset: Int) { self.offset = offset }

    var saved: (Int, Int) { (offset, index) }

    func restore(_ saved: (Int, Int)?) {
        guard let saved else { return }
        (offset, index) = saved
    }
}

struct BinaryUnkeyedDecoder: UnkeyedDecodingContainer {
    let shared: SharedReader
    var cursor: Int
    let total: Int
    var codingPath: [any CodingKey]
    var currentIndex = 0

    init(shared: SharedReader, cursor: Int, count: Int, codingPath: [any CodingKey]) {
        self.shared = shared
        self.cursor = cursor
        self.total = count
        self.codingPath = codingPath
    }

    var count: Int? { total }
    var isAtEnd: Bool { currentIndex >= total }

    /// The offset of the next element, advancing past it.
    private mutating func next() throws -> Int {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "array is at its end"))
        }
        let offset = cursor
        cursor = try shared.reader.valueEnd(at: offset, codingPath)
        currentIndex += 1
        return offset
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, try shared.reader.isNil(at: cursor, codingPath) else { return false }
        _ = try next()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try shared.reader.bool(at: next(), codingPath) }
    mutating func decode(_ type: String.Type) throws -> String { try shared.reader.string(at: next(), codingPath).0 }
    mutating func decode(_ type: Double.Type) throws -> Double { try shared.reader.double(at: next(), codingPath).0 }
    mutating func decode(_ type: Float.Type) throws -> Float { try shared.reader.float(at: next(), codingPath).0 }
    mutating func decode(_ type: Int.Type) throws -> Int { try shared.reader.integer(type, at: next(), codingPath).0 }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try shared.reader.integer(type, at: next(), codingPath).0 }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try shared.reader.integer(type, at: next(), codingPath).0 }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try shared.reader.integer(type, at: next(), codingPath).0 }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let index = currentIndex
        do { return try shared.decodeValue(type, at: next(), codingPath: []) } catch let error as DecodingError {
            throw error.prepending(IndexKey(intValue: index))
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try _BinaryDecoder(shared: shared, offset: next(), codingPath: codingPath).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try _BinaryDecoder(shared: shared, offset: next(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        _BinaryDecoder(shared: shared, offset: try next(), codingPath: codingPath)
    }
}

struct BinarySingleValueDecoder: SingleValueDecodingContainer {
    let shared: SharedReader
    let offset: Int
    var codingPath: [any CodingKey]

    func decodeNil() -> Bool { (try? shared.reader.isNil(at: offset, codingPath)) ?? false }
    func decode(_ type: Bool.Type) throws -> Bool { try shared.reader.bool(at: offset, codingPath) }
    func decode(_ type: String.Type) throws -> String { try shared.reader.string(at: offset, codingPath).0 }
    func decode(_ type: Double.Type) throws -> Double { try shared.reader.double(at: offset, codingPath).0 }
    func decode(_ type: Float.Type) throws -> Float { try shared.reader.float(at: offset, codingPath).0 }
    func decode(_ type: Int.Type) throws -> Int { try shared.reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: Int8.Type) throws -> Int8 { try shared.reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: Int16.Type) throws -> Int16 { try shared.reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: Int32.Type) throws -> Int32 { try shared.reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: Int64.Type) throws -> Int64 { try shared.reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: UInt.Type) throws -> UInt { try shared.reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try shared.reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try shared.reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try shared.reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try shared.reader.integer(type, at: offset, codingPath).0 }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try shared.decodeValue(type, at: offset, codingPath: codingPath) }
}

package struct IndexKey: CodingKey {
    package var intValue: Int?
    package var stringValue: String { "\(intValue ?? 0)" }
    package init(intValue: Int) { self.intValue = intValue }
    package init?(stringValue: String) { nil }
}

extension DecodingError {
    /// The same error one level up: `key` in front of its coding path.
    package func prepending(_ key: any CodingKey) -> DecodingError {
        func lift(_ c: Context) -> Context {
            Context(codingPath: [key] + c.codingPath, debugDescription: c.debugDescription, underlyingError: c.underlyingError)
        }
        switch self {
        case .typeMismatch(let type, let c): return .typeMismatch(type, lift(c))
        case .valueNotFound(let type, let c): return .valueNotFound(type, lift(c))
        case .keyNotFound(let k, let c): return .keyNotFound(k, lift(c))
        case .dataCorrupted(let c): return .dataCorrupted(lift(c))
        @unknown default: return self
        }
    }
}

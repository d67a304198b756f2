/// `Encodable` over the binary format: a thin adapter that writes through ``WireWriter``. `encode(to:)`
/// says where a container ends only by writing its next sibling (or nothing more), so the containers not
/// yet closed are kept here, each with its depth, and a container's length is set once anything at its own
/// depth or shallower comes next.
final class BinaryEncoding {
    var writer = WireWriter()
    /// Containers whose length is not yet final, innermost last.
    private var open: [(container: WireWriter.Container, depth: Int)] = []

    func closeContainers(deeperThan depth: Int) {
        while let last = open.last, last.depth > depth {
            open.removeLast()
            writer.setLength(of: last.container)
        }
    }

    /// Starts a container value at `depth`.
    func beginContainer(_ tag: BinaryTag, depth: Int) -> WireWriter.Container {
        closeContainers(deeperThan: depth)
        let container = writer.begin(tag)
        open.append((container, depth))
        return container
    }

    /// Writes one value at `depth`, with fast paths for the common scalars.
    func encodeValue<T: Encodable>(_ value: T, depth: Int, codingPath: [any CodingKey]) throws {
        closeContainers(deeperThan: depth)
        // swift-format-ignore: NeverForceUnwrap
        // (each case's cast is to the type its `case is` just matched T against)
        switch T.self {
        case is String.Type: writer.write(value as! String)
        case is Int.Type: writer.write(Int64(value as! Int))
        case is UInt64.Type: writer.write(value as! UInt64)
        case is Bool.Type: writer.write(value as! Bool)
        case is Double.Type: writer.write(value as! Double)
        default:
            let start = writer.bytes.count
            try value.encode(to: _BinaryEncoder(encoding: self, depth: depth, codingPath: codingPath))
            // A value that wrote nothing (a custom encode(to:) that is empty) still takes one slot.
            if writer.bytes.count == start { _ = beginContainer(.map, depth: depth) }
        }
    }
}

struct _BinaryEncoder: Encoder {
    let encoding: BinaryEncoding
    let depth: Int
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let container = encoding.beginContainer(.map, depth: depth)
        return KeyedEncodingContainer(BinaryKeyedEncoder<Key>(entries: Entries(encoding, depth, container), codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let container = encoding.beginContainer(.array, depth: depth)
        return BinaryUnkeyedEncoder(entries: Entries(encoding, depth, container), codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncoder(encoding: encoding, depth: depth, codingPath: codingPath)
    }
}

/// The entries of a keyed or unkeyed container being written: each one closes what the one before it
/// left open and counts itself in the container's header.
struct Entries {
    let encoding: BinaryEncoding
    let depth: Int
    let container: WireWriter.Container
    private(set) var count = 0

    init(_ encoding: BinaryEncoding, _ depth: Int, _ container: WireWriter.Container) {
        self.encoding = encoding
        self.depth = depth
        self.container = container
    }

    /// Starts the next entry; its value sits one level deeper than the container.
    mutating func next() {
        encoding.closeContainers(deeperThan: depth)
        count += 1
        encoding.writer.setCount(count, of: container)
    }

    /// An encoder for the entry just started.
    func value(_ codingPath: [any CodingKey]) -> _BinaryEncoder { _BinaryEncoder(encoding: encoding, depth: depth + 1, codingPath: codingPath) }

    func encode<T: Encodable>(_ value: T, _ codingPath: [any CodingKey]) throws {
        try encoding.encodeValue(value, depth: depth + 1, codingPath: codingPath)
    }
}

struct BinaryKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var entries: Entries
    var codingPath: [any CodingKey]
    private var writer: WireWriter {
        get { entries.encoding.writer }
        nonmutating _modify { yield &entries.encoding.writer }
    }

    /// Writes the key of a new entry.
    private mutating func entry(_ key: Key) { entry(named: key.stringValue) }

    private mutating func entry(named name: String) {
        entries.next()
        writer.key(name)
    }

    mutating func encodeNil(forKey key: Key) throws { entry(key); writer.writeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { entry(key); writer.write(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { entry(key); writer.write(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { entry(key); writer.write(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { entry(key); writer.write(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { entry(key); writer.write(Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { entry(key); writer.write(Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { entry(key); writer.write(Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { entry(key); writer.write(Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { entry(key); writer.write(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { entry(key); writer.write(UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { entry(key); writer.write(UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { entry(key); writer.write(UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { entry(key); writer.write(UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { entry(key); writer.write(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        entry(key)
        try entries.encode(value, codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        entry(key)
        return entries.value(codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        entry(key)
        return entries.value(codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        // Under the key "super", as Foundation's encoders do; `Key` itself need not have that case.
        entry(named: "super")
        return entries.value(codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        // The caller must write exactly one value through the returned encoder.
        entry(key)
        return entries.value(codingPath)
    }
}

struct BinaryUnkeyedEncoder: UnkeyedEncodingContainer {
    var entries: Entries
    var codingPath: [any CodingKey]
    var count: Int { entries.count }
    private var writer: WireWriter {
        get { entries.encoding.writer }
        nonmutating _modify { yield &entries.encoding.writer }
    }

    private mutating func element() { entries.next() }

    mutating func encodeNil() throws { element(); writer.writeNil() }
    mutating func encode(_ value: Bool) throws { element(); writer.write(value) }
    mutating func encode(_ value: String) throws { element(); writer.write(value) }
    mutating func encode(_ value: Double) throws { element(); writer.write(value) }
    mutating func encode(_ value: Float) throws { element(); writer.write(value) }
    mutating func encode(_ value: Int) throws { element(); writer.write(Int64(value)) }
    mutating func encode(_ value: Int64) throws { element(); writer.write(value) }
    mutating func encode(_ value: UInt64) throws { element(); writer.write(value) }
    mutating func encode(_ value: UInt8) throws { element(); writer.write(UInt64(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        element()
        try entries.encode(value, codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        element()
        return entries.value(codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        element()
        return entries.value(codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        element()
        return entries.value(codingPath)
    }
}

struct BinarySingleValueEncoder: SingleValueEncodingContainer {
    let encoding: BinaryEncoding
    let depth: Int
    var codingPath: [any CodingKey]

    /// The writer, once what the value before this one left open is closed.
    private var writer: WireWriter {
        get { encoding.writer }
        nonmutating _modify {
            encoding.closeContainers(deeperThan: depth)
            yield &encoding.writer
        }
    }

    mutating func encodeNil() throws { writer.writeNil() }
    mutating func encode(_ value: Bool) throws { writer.write(value) }
    mutating func encode(_ value: String) throws { writer.write(value) }
    mutating func encode(_ value: Double) throws { writer.write(value) }
    mutating func encode(_ value: Float) throws { writer.write(value) }
    mutating func encode(_ value: Int) throws { writer.write(Int64(value)) }
    mutating func encode(_ value: Int8) throws { writer.write(Int64(value)) }
    mutating func encode(_ value: Int16) throws { writer.write(Int64(value)) }
    mutating func encode(_ value: Int32) throws { writer.write(Int64(value)) }
    mutating func encode(_ value: Int64) throws { writer.write(value) }
    mutating func encode(_ value: UInt) throws { writer.write(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { writer.write(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { writer.write(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { writer.write(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { writer.write(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try encoding.encodeValue(value, depth: depth, codingPath: codingPath) }
}

struct _BinaryEncoder: Encoder {
    let writer: BinaryWriter
    let depth: Int
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let countAt = writer.beginContainer(.map, depth: depth)
        return KeyedEncodingContainer(BinaryKeyedEncoder<Key>(writer: writer, depth: depth, countAt: countAt, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let countAt = writer.beginContainer(.array, depth: depth)
        return BinaryUnkeyedEncoder(writer: writer, depth: depth, countAt: countAt, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncoder(writer: writer, depth: depth, codingPath: codingPath)
    }
}

struct BinaryKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: BinaryWriter
    let depth: Int
    let countAt: Int
    var count: UInt32 = 0
    var codingPath: [any CodingKey]

    init(writer: BinaryWriter, depth: Int, countAt: Int, codingPath: [any CodingKey]) {
        self.writer = writer
        self.depth = depth
        self.countAt = countAt
        self.codingPath = codingPath
    }

    /// Writes the key of a new entry (children sit one level deeper than the container).
    private mutating func entry(_ key: Key) { entry(named: key.stringValue) }

    private mutating func entry(named name: String) {
        writer.closeContainers(deeperThan: depth)
        count += 1
        writer.patch(count, at: countAt)
        writer.key(name)
    }

    mutating func encodeNil(forKey key: Key) throws { entry(key); writer.null() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { entry(key); writer.bool(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { entry(key); writer.string(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { entry(key); writer.double(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { entry(key); writer.float(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { entry(key); writer.int(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { entry(key); writer.uint(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        entry(key)
        try writer.encodeValue(value, depth: depth + 1, codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        entry(key)
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        entry(key)
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        // Under the key "super", as Foundation's encoders do; `Key` itself need not have that case.
        entry(named: "super")
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        // The caller must write exactly one value through the returned encoder.
        entry(key)
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath)
    }
}

struct BinaryUnkeyedEncoder: UnkeyedEncodingContainer {
    let writer: BinaryWriter
    let depth: Int
    let countAt: Int
    var count: Int = 0
    var codingPath: [any CodingKey]

    init(writer: BinaryWriter, depth: Int, countAt: Int, codingPath: [any CodingKey]) {
        self.writer = writer
        self.depth = depth
        self.countAt = countAt
        self.codingPath = codingPath
    }

    private mutating func element() {
        writer.closeContainers(deeperThan: depth)
        count += 1
        writer.patch(UInt32(truncatingIfNeeded: count), at: countAt)
    }

    mutating func encodeNil() throws { element(); writer.null() }
    mutating func encode(_ value: Bool) throws { element(); writer.bool(value) }
    mutating func encode(_ value: String) throws { element(); writer.string(value) }
    mutating func encode(_ value: Double) throws { element(); writer.double(value) }
    mutating func encode(_ value: Float) throws { element(); writer.float(value) }
    mutating func encode(_ value: Int) throws { element(); writer.int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { element(); writer.int(value) }
    mutating func encode(_ value: UInt64) throws { element(); writer.uint(value) }
    mutating func encode(_ value: UInt8) throws { element(); writer.uint(UInt64(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        element()
        try writer.encodeValue(value, depth: depth + 1, codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        element()
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        element()
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        element()
        return _BinaryEncoder(writer: writer, depth: depth + 1, codingPath: codingPath)
    }
}

struct BinarySingleValueEncoder: SingleValueEncodingContainer {
    let writer: BinaryWriter
    let depth: Int
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { writer.closeContainers(deeperThan: depth); writer.null() }
    mutating func encode(_ value: Bool) throws { writer.closeContainers(deeperThan: depth); writer.bool(value) }
    mutating func encode(_ value: String) throws { writer.closeContainers(deeperThan: depth); writer.string(value) }
    mutating func encode(_ value: Double) throws { writer.closeContainers(deeperThan: depth); writer.double(value) }
    mutating func encode(_ value: Float) throws { writer.closeContainers(deeperThan: depth); writer.float(value) }
    mutating func encode(_ value: Int) throws { writer.closeContainers(deeperThan: depth); writer.int(Int64(value)) }
    mutating func encode(_ value: Int8) throws { writer.closeContainers(deeperThan: depth); writer.int(Int64(value)) }
    mutating func encode(_ value: Int16) throws { writer.closeContainers(deeperThan: depth); writer.int(Int64(value)) }
    mutating func encode(_ value: Int32) throws { writer.closeContainers(deeperThan: depth); writer.int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { writer.closeContainers(deeperThan: depth); writer.int(value) }
    mutating func encode(_ value: UInt) throws { writer.closeContainers(deeperThan: depth); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { writer.closeContainers(deeperThan: depth); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { writer.closeContainers(deeperThan: depth); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { writer.closeContainers(deeperThan: depth); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { writer.closeContainers(deeperThan: depth); writer.uint(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try writer.encodeValue(value, depth: depth, codingPath: codingPath) }
}

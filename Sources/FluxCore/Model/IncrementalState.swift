/// A state that records what its reducer changed, so stores publish the change instead of the whole
/// state: the cost of an update then follows the size of the change, not of the state (the Clone
/// pattern's key-value updates). Views apply the changes to their copy; late joiners and views that
/// missed an update still get a whole snapshot.
///
/// Most states conform by keeping their large collections in `TrackedDictionary` and listing them:
/// ```swift
/// struct Ledger: IncrementalState {
///     var accounts = TrackedDictionary<Int, Account>()
///     var total = 0
///
///     struct Changes: Codable, Sendable { var accounts: TrackedDictionary<Int, Account>.Changes; var total: Int }
///     mutating func takeChanges() -> Changes { Changes(accounts: accounts.takeChanges(), total: total) }
///     mutating func apply(_ changes: Changes) { accounts.apply(changes.accounts); total = changes.total }
/// }
/// ```
/// Small fields can be sent whole in every change, as `total` is here.
public protocol IncrementalState: Codable, Equatable, Sendable {
    associatedtype Changes: Codable & Sendable
    /// What changed since the last call (or since the state was created or decoded), clearing the record.
    mutating func takeChanges() -> Changes
    /// Applies changes taken from a state that was equal to this one.
    mutating func apply(_ changes: Changes)
}

/// A dictionary that remembers which keys were set or removed since its changes were last taken.
/// Equality and the encoded form ignore that record; a decoded value starts with none.
public struct TrackedDictionary<Key: Hashable & Codable & Sendable, Value: Codable & Equatable & Sendable>: Sendable, Equatable {
    public private(set) var storage: [Key: Value]
    private var changed: Set<Key> = []

    public init(_ storage: [Key: Value] = [:]) { self.storage = storage }

    public subscript(key: Key) -> Value? {
        get { storage[key] }
        set {
            // Setting nil where nothing is changes nothing. A value is always stored and recorded, even
            // one `==` calls equal to the old: an app's `==` may compare only part of a value.
            guard newValue != nil || storage[key] != nil else { return }
            storage[key] = newValue
            changed.insert(key)
        }
    }

    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }
    public var keys: Dictionary<Key, Value>.Keys { storage.keys }
    public var values: Dictionary<Key, Value>.Values { storage.values }

    /// Changes a value in place without copying it out (and back) first.
    public mutating func update(_ key: Key, _ body: (inout Value) -> Void) {
        guard let index = storage.index(forKey: key) else { return }
        body(&storage.values[index])
        changed.insert(key)
    }

    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        // Removing a key that is not there changes nothing (a ledger closing an account nobody opened).
        guard let removed = storage.removeValue(forKey: key) else { return nil }
        changed.insert(key)
        return removed
    }

    public static func == (a: Self, b: Self) -> Bool { a.storage == b.storage }

    public struct Changes: Codable, Sendable, Equatable {
        public var updated: [Entry]
        public var removed: [Key]

        public struct Entry: Codable, Sendable, Equatable {
            public var key: Key
            public var value: Value
        }

        public var isEmpty: Bool { updated.isEmpty && removed.isEmpty }
    }

    public mutating func takeChanges() -> Changes {
        var changes = Changes(updated: [], removed: [])
        for key in changed {
            if let value = storage[key] { changes.updated.append(.init(key: key, value: value)) } else { changes.removed.append(key) }
        }
        changed.removeAll(keepingCapacity: true)
        return changes
    }

    public mutating func apply(_ changes: Changes) {
        for entry in changes.updated { storage[entry.key] = entry.value }
        for key in changes.removed { storage.removeValue(forKey: key) }
    }
}

extension TrackedDictionary: Codable {
    /// Encoded as a flat list of key, value, key, value… (any key type, one container).
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var storage: [Key: Value] = [:]
        if let count = container.count { storage.reserveCapacity(count / 2) }
        while !container.isAtEnd {
            let key = try container.decode(Key.self)
            storage[key] = try container.decode(Value.self)
        }
        self.init(storage)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for (key, value) in storage {
            try container.encode(key)
            try container.encode(value)
        }
    }
}

// The store's hot path (one change per action): the same bytes as the `Codable` conformances, written
// and read without `Codable` when the keys and values have wire conformances (`@WireCodable`).

extension TrackedDictionary: WireEncodable where Key: WireEncodable, Value: WireEncodable {
    public func wireEncode(to writer: inout WireWriter) throws {
        let container = writer.beginArray()
        for (key, value) in storage {
            try key.wireEncode(to: &writer)
            try value.wireEncode(to: &writer)
        }
        writer.end(container, count: storage.count * 2)
    }
}

extension TrackedDictionary: WireDecodable where Key: WireDecodable, Value: WireDecodable {
    public init(wireReader reader: inout WireReader) throws {
        let container = try reader.beginArray()
        var storage: [Key: Value] = [:]
        storage.reserveCapacity(container.count / 2)
        var index = 0
        while index < container.count {
            do {
                let key = try Key(wireReader: &reader)
                index += 1
                guard index < container.count else {
                    throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "array is at its end"))
                }
                storage[key] = try Value(wireReader: &reader)
                index += 1
            } catch let error as DecodingError { throw error.prepending(IndexKey(intValue: index)) }
        }
        try reader.end(container)
        self.init(storage)
    }
}

extension TrackedDictionary.Changes: WireEncodable where Key: WireEncodable, Value: WireEncodable {
    public func wireEncode(to writer: inout WireWriter) throws {
        let container = writer.beginMap()
        writer.key("updated")
        try updated.wireEncode(to: &writer)
        writer.key("removed")
        try removed.wireEncode(to: &writer)
        writer.end(container, count: 2)
    }
}

extension TrackedDictionary.Changes: WireDecodable where Key: WireDecodable, Value: WireDecodable {
    public init(wireReader reader: inout WireReader) throws {
        var updated: [Entry]?
        var removed: [Key]?
        let container = try reader.beginMap()
        for _ in 0..<container.count {
            let key = try reader.readKey()
            if reader.key(key, is: "updated") {
                updated = try [Entry](wireReader: &reader)
            } else if reader.key(key, is: "removed") {
                removed = try [Key](wireReader: &reader)
            } else {
                try reader.skipValue()
            }
        }
        try reader.end(container)
        guard let updated else { throw reader.missing("updated") }
        guard let removed else { throw reader.missing("removed") }
        self.init(updated: updated, removed: removed)
    }
}

extension TrackedDictionary.Changes.Entry: WireEncodable where Key: WireEncodable, Value: WireEncodable {
    public func wireEncode(to writer: inout WireWriter) throws {
        let container = writer.beginMap()
        writer.key("key")
        try key.wireEncode(to: &writer)
        writer.key("value")
        try value.wireEncode(to: &writer)
        writer.end(container, count: 2)
    }
}

extension TrackedDictionary.Changes.Entry: WireDecodable where Key: WireDecodable, Value: WireDecodable {
    public init(wireReader reader: inout WireReader) throws {
        var key: Key?
        var value: Value?
        let container = try reader.beginMap()
        for _ in 0..<container.count {
            let name = try reader.readKey()
            if reader.key(name, is: "key") {
                key = try reader.decode(Key.self, forKey: "key")
            } else if reader.key(name, is: "value") {
                value = try reader.decode(Value.self, forKey: "value")
            } else {
                try reader.skipValue()
            }
        }
        try reader.end(container)
        guard let key else { throw reader.missing("key") }
        guard let value else { throw reader.missing("value") }
        self.init(key: key, value: value)
    }
}

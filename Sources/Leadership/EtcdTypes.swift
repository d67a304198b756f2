/// A lease etcd granted: keys attached to it go when it expires or is revoked.
public struct Lease: Sendable, Hashable, CustomStringConvertible {
    /// etcd's id for the lease.
    public let id: Int64
    /// The time to live etcd granted, which may be more than was asked (etcd's minimum is 2 s with its
    /// default election timeout).
    public let ttlSeconds: Int64

    public init(id: Int64, ttlSeconds: Int64) {
        self.id = id
        self.ttlSeconds = ttlSeconds
    }

    public var description: String { "lease \(id) (\(ttlSeconds) s)" }
}

/// A key as etcd holds it.
public struct KeyValue: Sendable, Hashable {
    public let key: String
    public let value: [UInt8]
    /// The revision at which the key was created; it stays until the key is deleted.
    public let createRevision: Int64
    /// The revision of the key's last change.
    public let modRevision: Int64
    /// How many times the key was written since it was created.
    public let version: Int64
    /// The lease the key is attached to; 0 for none.
    public let lease: Int64

    public init(key: String, value: [UInt8], createRevision: Int64, modRevision: Int64, version: Int64, lease: Int64) {
        self.key = key
        self.value = value
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.version = version
        self.lease = lease
    }
}

/// What a campaign for a key found.
public enum Campaign: Sendable, Hashable {
    /// The key was free and is now ours, created at `revision`: the winner's fencing epoch.
    case won(revision: Int64)
    /// Someone holds the key.
    case held(by: KeyValue)
}

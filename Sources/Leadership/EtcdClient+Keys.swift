extension EtcdClient {
    /// The key's current value, if it exists, and the store's revision when it was read.
    public func get(_ key: String) async throws -> (keyValue: KeyValue?, revision: Int64) {
        let answer = try await call("/v3/kv/range", Wire.Range(key: key), as: Wire.RangeAnswer.self)
        return (answer.kvs.first.map(KeyValue.init), answer.header.revision)
    }

    /// Writes `value` at `key`, attached to `lease` if one is given; returns the revision of the write.
    @discardableResult
    public func put(_ key: String, value: [UInt8], lease: Lease? = nil) async throws -> Int64 {
        let request = Wire.Put(key: key, value: value, lease: lease?.id)
        return try await call("/v3/kv/put", request, as: Wire.HeaderOnly.self).header.revision
    }

    /// Deletes `key`; true if it existed.
    @discardableResult
    public func delete(_ key: String) async throws -> Bool {
        try await call("/v3/kv/deleterange", Wire.DeleteRange(key: key), as: Wire.DeleteRangeAnswer.self).deleted > 0
    }

    /// In one transaction: if `key` does not exist, creates it with `value` attached to `lease`; otherwise
    /// reads it.
    ///
    /// The winner's revision is the transaction's, which is the key's create revision. A key found held
    /// under `lease` itself is a win too, at its create revision: an earlier attempt went through but its
    /// answer was lost.
    public func campaign(key: String, value: [UInt8], lease: Lease) async throws -> Campaign {
        let path = "/v3/kv/txn"
        let txn = Wire.Txn(
            compare: [.created(key, at: 0)],
            success: [Wire.Operation(put: Wire.Put(key: key, value: value, lease: lease.id))],
            failure: [Wire.Operation(range: Wire.Range(key: key))])
        return try Self.campaignOutcome(try await call(path, txn, as: Wire.TxnAnswer.self), key: key, lease: lease)
    }

    /// The revisions a win may name: a winner's epoch is `2^39 | revision` (a dispatcher's
    /// `HistoryID.leading`), so a revision of 0, a negative one or one of 2^39 and more is not an answer
    /// etcd gives. Such an answer is a failed campaign, never a win the dispatcher would trap on.
    package static let winnableRevisions: Range<Int64> = 1..<(1 << 39)

    /// What a campaign's transaction answer means; throws ``EtcdError`` for an answer etcd would not
    /// give (a missing holder, a revision outside ``winnableRevisions``).
    static func campaignOutcome(_ answer: Wire.TxnAnswer, key: String, lease: Lease) throws -> Campaign {
        func checked(_ revision: Int64) throws -> Campaign {
            guard winnableRevisions.contains(revision) else {
                throw EtcdError(.malformedAnswer, "/v3/kv/txn: the campaign for \(key) was won at revision \(revision), outside 1..<2^39")
            }
            return .won(revision: revision)
        }
        if answer.succeeded { return try checked(answer.header.revision) }
        guard let holder = answer.responses.first?.range?.kvs.first.map(KeyValue.init) else {
            // The comparison failed, so the key existed when the transaction read it.
            throw EtcdError(.malformedAnswer, "/v3/kv/txn: the campaign for \(key) lost but read no holder")
        }
        if holder.lease == lease.id { return try checked(holder.createRevision) }
        return .held(by: holder)
    }

    /// Writes `value` at `key` (without a lease) only if `holderKey` is still attached to `lease`: a
    /// leader's write that cannot land once a successor holds the key. True if it was written.
    package func put(_ key: String, value: [UInt8], whileHolding holderKey: String, lease: Lease) async throws -> Bool {
        let txn = Wire.Txn(
            compare: [.leased(holderKey, to: lease.id)], success: [Wire.Operation(put: Wire.Put(key: key, value: value, lease: nil))],
            failure: [])
        return try await call("/v3/kv/txn", txn, as: Wire.TxnAnswer.self).succeeded
    }

    /// Deletes `key` only if it is still attached to `lease`: the holder giving the key up, which cannot
    /// delete a successor's. True if it was deleted.
    @discardableResult
    public func resign(key: String, lease: Lease) async throws -> Bool {
        let txn = Wire.Txn(
            compare: [.leased(key, to: lease.id)], success: [Wire.Operation(deleteRange: Wire.DeleteRange(key: key))], failure: [])
        return try await call("/v3/kv/txn", txn, as: Wire.TxnAnswer.self).succeeded
    }
}

extension KeyValue {
    init(_ wire: Wire.KeyValue) {
        self.init(
            key: String(decoding: wire.key, as: UTF8.self), value: wire.value, createRevision: wire.createRevision,
            modRevision: wire.modRevision, version: wire.version, lease: wire.lease)
    }
}

extension EtcdClient {
    /// Asks for a lease of `ttlSeconds`; etcd may grant more (its minimum).
    public func grantLease(ttlSeconds: Int64) async throws -> Lease {
        let answer = try await call("/v3/lease/grant", Wire.LeaseGrant(ttl: String(ttlSeconds)), as: Wire.LeaseAnswer.self)
        if let error = answer.error, !error.isEmpty {
            throw EtcdError(.rejected, "/v3/lease/grant: \(error)")
        }
        guard answer.id != 0, answer.ttl > 0 else {
            throw EtcdError(.malformedAnswer, "/v3/lease/grant answered lease \(answer.id) with TTL \(answer.ttl)")
        }
        return Lease(id: answer.id, ttlSeconds: answer.ttl)
    }

    /// Renews `lease` for its whole time to live, counted from when etcd handles the request, and returns that
    /// time in seconds. Throws ``EtcdError/Code/leaseNotFound`` when the lease has expired or was revoked.
    @discardableResult
    public func keepAlive(_ lease: Lease) async throws -> Int64 {
        let path = "/v3/lease/keepalive"
        let answer = try await call(path, Wire.LeaseID(id: String(lease.id)), as: Wire.StreamedLeaseAnswer.self)
        if let failure = answer.error {
            let code: EtcdError.Code = failure.text.contains("lease not found") ? .leaseNotFound : .rejected
            throw EtcdError(code, "\(path): \(failure.text)")
        }
        guard let result = answer.result else { throw EtcdError(.malformedAnswer, "\(path) answered neither a result nor an error") }
        // The gateway answers a lease it does not know with 200 and no TTL.
        guard result.ttl > 0 else { throw EtcdError(.leaseNotFound, "\(path): \(lease) has expired or was revoked") }
        return result.ttl
    }

    /// Revokes `lease`, deleting every key attached to it. Throws ``EtcdError/Code/leaseNotFound`` when it
    /// was already gone.
    public func revoke(_ lease: Lease) async throws {
        _ = try await call("/v3/lease/revoke", Wire.LeaseID(id: String(lease.id)), as: Wire.HeaderOnly.self)
    }

    /// The seconds `lease` has left, or nil when it has expired or was revoked.
    public func timeToLive(_ lease: Lease) async throws -> Int64? {
        let answer = try await call("/v3/lease/timetolive", Wire.LeaseID(id: String(lease.id)), as: Wire.LeaseAnswer.self)
        return answer.ttl < 0 ? nil : answer.ttl
    }
}

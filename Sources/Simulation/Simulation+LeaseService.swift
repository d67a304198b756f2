@_spi(Simulation) import FluxCore
@_spi(Simulation) import NodeCores

/// The HA cluster's lease service (etcd as the pair sees it: one key, leases with a time to live, a
/// revision bumped by every write): its answers, its leases running out, and its restarts.
extension Simulation {
    func leaseServiceReceives(_ delivery: Delivery) {
        guard leaseService.up, case .leaseRequest(let from, let incarnation, let request) = delivery else { return }
        let service = leaseService
        let answer: LeaseAnswer?
        switch request {
        case .campaign(let sentAt):
            if let key = service.key {
                answer = .taken(by: key.owner)
            } else {
                let lease = service.nextLease
                service.nextLease += 1
                service.revision += 1
                service.leases[lease] = (from, now + Simulation.leaseTTL)
                service.key = (from, lease)
                queue.schedule(.leaseExpiry(lease: lease), at: now + Simulation.leaseTTL)
                record(
                    24, Node.leaseService.code, UInt64(service.revision),
                    "the lease service gives the key to \(name(of: .dispatcher(from))) at revision \(service.revision)")
                answer = .won(lease: lease, revision: service.revision, sentAt: sentAt)
            }
        case .keepAlive(let lease, let sentAt):
            if service.leases[lease] != nil {
                service.leases[lease]?.expiresAt = now + Simulation.leaseTTL
                queue.schedule(.leaseExpiry(lease: lease), at: now + Simulation.leaseTTL)
                answer = .renewed(lease: lease, sentAt: sentAt)
            } else {
                answer = .gone(lease: lease)
            }
        case .revoke(let lease):
            dropLease(lease, "revoked")
            answer = nil
        }
        if let answer { send(.leaseAnswer(answer), from: .leaseService, to: .dispatcher(from), incarnation: incarnation) }
    }

    /// The service's clock reaches a lease's expiry (if it was not renewed since).
    func leaseExpiry(_ lease: UInt64) {
        guard leaseService.up, let entry = leaseService.leases[lease], entry.expiresAt <= now else { return }
        if leaseService.frozenUntil > now {
            queue.schedule(.leaseExpiry(lease: lease), at: leaseService.frozenUntil)
            return
        }
        dropLease(lease, "expired")
    }

    func dropLease(_ lease: UInt64, _ why: String) {
        guard let entry = leaseService.leases.removeValue(forKey: lease) else { return }
        guard leaseService.key?.lease == lease else { return }
        leaseService.key = nil
        leaseService.revision += 1
        record(
            25, Node.leaseService.code, UInt64(leaseService.revision),
            "the lease of \(name(of: .dispatcher(entry.owner))) \(why): the key is free (revision \(leaseService.revision))")
    }

    func restartLeaseService() {
        leaseService.up = true
        // In lease order: the expiries are events, and their order must not depend on the process's hashing.
        for lease in leaseService.leases.keys.sorted() {
            leaseService.leases[lease]?.expiresAt = now + Simulation.leaseTTL
            queue.schedule(.leaseExpiry(lease: lease), at: now + Simulation.leaseTTL)
        }
    }
}

import FluxCore

/// Client ids as the dispatcher keeps them: scoped to the authenticated peer that sent them.
///
/// A client chooses its own id, so two keys can send the same one, by accident or to capture another's
/// dispatch (its (client id, client seq) sent first would be answered with the attacker's seq). With
/// CURVE, the dispatcher replaces the id of every DISPATCH with `SipHash-2-4(secret, public key ‖ id)`
/// before it deduplicates, journals and broadcasts the action; answers still carry the client's own id.
/// The secret lives beside the journal, so the same key and id map to the same scoped id after a
/// restart, and retries journaled before it are still recognised; a peer without the secret cannot aim
/// at another key's scoped id. Without CURVE (ipc, loopback tcp: one user's processes) ids are kept as
/// they are.
public struct ClientScope: Sendable, Equatable {
    public var k0: UInt64
    public var k1: UInt64

    public init(k0: UInt64, k1: UInt64) {
        self.k0 = k0
        self.k1 = k1
    }

    /// The secret's size in bytes as it is stored and sent.
    package static let encodedSize = 16

    /// The secret as the journal's `CLIENT-SCOPE` file holds it and a leader's REPLICA-WELCOME begins
    /// with it: k0 then k1, little-endian. The one writer of those bytes.
    package func encode(into bytes: inout [UInt8]) {
        bytes.appendLittleEndian(k0)
        bytes.appendLittleEndian(k1)
    }

    /// The secret from the ``encodedSize`` bytes at `offset` of `bytes` (``encode(into:)``'s), or nil
    /// when they are not all there. The one reader of those bytes.
    package init?(decoding bytes: [UInt8], at offset: Int = 0) {
        precondition(offset >= 0, "an offset is never negative")
        guard bytes.count - offset >= ClientScope.encodedSize else { return nil }
        self.init(k0: bytes.readLittleEndian(UInt64.self, at: offset), k1: bytes.readLittleEndian(UInt64.self, at: offset + 8))
    }

    /// The id the dispatcher keeps for `clientID` sent by the peer with public key `principal` (never 0).
    public func clientID(_ principal: [UInt8], _ clientID: UInt64) -> UInt64 {
        var bytes = principal
        bytes.appendLittleEndian(clientID)
        let scoped = SipHash.hash(bytes, k0: k0, k1: k1)
        return scoped == 0 ? 1 : scoped
    }

    /// One number per authenticated peer, for its rate limit and its share of the dedup table.
    public func owner(_ principal: [UInt8]) -> UInt64 { SipHash.hash(principal, k0: k1, k1: k0) }
}

/// SipHash-2-4 with a 64-bit result (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012).
public enum SipHash {
    public static func hash(_ bytes: [UInt8], k0: UInt64, k1: UInt64) -> UInt64 {
        var v0: UInt64 = 0x736f_6d65_7073_6575 ^ k0
        var v1: UInt64 = 0x646f_7261_6e64_6f6d ^ k1
        var v2: UInt64 = 0x6c79_6765_6e65_7261 ^ k0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ k1
        func round() {
            v0 &+= v1
            v1 = v1.rotateLeft(13) ^ v0
            v0 = v0.rotateLeft(32)
            v2 &+= v3
            v3 = v3.rotateLeft(16) ^ v2
            v0 &+= v3
            v3 = v3.rotateLeft(21) ^ v0
            v2 &+= v1
            v1 = v1.rotateLeft(17) ^ v2
            v2 = v2.rotateLeft(32)
        }
        let whole = bytes.count / 8 * 8
        var offset = 0
        while offset < whole {
            let m = bytes.readLittleEndian(UInt64.self, at: offset)
            v3 ^= m
            round()
            round()
            v0 ^= m
            offset += 8
        }
        var last = UInt64(bytes.count & 0xFF) << 56
        for i in 0..<(bytes.count - whole) { last |= UInt64(bytes[whole + i]) << (8 * UInt64(i)) }
        v3 ^= last
        round()
        round()
        v0 ^= last
        v2 ^= 0xFF
        for _ in 0..<4 { round() }
        return v0 ^ v1 ^ v2 ^ v3
    }
}

extension UInt64 {
    fileprivate func rotateLeft(_ count: UInt64) -> UInt64 { (self << count) | (self >> (64 - count)) }
}

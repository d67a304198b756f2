import CSodium
import CZMQ

/// CURVE keys (libzmq's CurveZMQ): 32-byte Curve25519 keys, written as 40-character Z85 text.
public enum Curve {
    /// True when the linked libzmq was built with CURVE support.
    public static var isAvailable: Bool { zmq_has("curve") == 1 }

    /// A new key pair, both halves in Z85.
    public static func keyPair() throws(ZMQError) -> (publicKey: String, secretKey: String) {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        _ = try zmqCall("zmq_curve_keypair") { zmq_curve_keypair(&publicKey, &secretKey) }
        func text(_ chars: [CChar]) -> String { String(decoding: chars.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return (text(publicKey), text(secretKey))
    }

    /// The 32 key bytes of a Z85 key, or nil when `text` is not one.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count == 40 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        let ok = bytes.withUnsafeMutableBufferPointer { buffer in zmq_z85_decode(buffer.baseAddress, text) != nil }
        return ok ? bytes : nil
    }

    /// A 32-byte digest of `message` that only the holder of one of two key pairs can compute: an
    /// HMAC-SHA-256 keyed by the Curve25519 agreement of `secretKey` and `peerPublicKey`, which is the
    /// same from either side (A's secret with B's public, or B's secret with A's public). Nil when a
    /// key is not a Z85 key or the agreement is degenerate (a public key of low order). The agreed key
    /// is wiped before it returns.
    package static func agreedDigest(of message: [UInt8], secretKey: String, peerPublicKey: String) -> [UInt8]? {
        guard var secret = decode(secretKey), let peer = decode(peerPublicKey), sodium_init() >= 0 else { return nil }
        var shared = [UInt8](repeating: 0, count: Int(crypto_box_BEFORENMBYTES))
        defer {
            sodium_memzero(&shared, shared.count)
            sodium_memzero(&secret, secret.count)
        }
        guard crypto_box_beforenm(&shared, peer, secret) == 0 else { return nil }
        var digest = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        guard crypto_auth_hmacsha256(&digest, message, UInt64(message.count), shared) == 0 else { return nil }
        return digest
    }

    /// The Z85 text of 32 key bytes.
    public static func encode(_ key: [UInt8]) -> String? {
        guard key.count == 32 else { return nil }
        var text = [CChar](repeating: 0, count: 41)
        guard zmq_z85_encode(&text, key, 32) != nil else { return nil }
        return String(decoding: text.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension Socket {
    /// Makes this socket a CURVE server (set before `bind`): peers must speak CURVE and pass the ZAP
    /// handler of `domain`.
    public func makeCurveServer(secretKey: String, domain: String = "zflux") throws(ZMQError) {
        try setOption(.curveServer, 1)
        try setBytesOption(ZMQ_CURVE_SECRETKEY, Array(secretKey.utf8))
        try setBytesOption(ZMQ_ZAP_DOMAIN, Array(domain.utf8))
    }

    /// Makes this socket a CURVE client of the server with `serverKey` (set before `connect`).
    public func makeCurveClient(serverKey: String, publicKey: String, secretKey: String) throws(ZMQError) {
        try setBytesOption(ZMQ_CURVE_SERVERKEY, Array(serverKey.utf8))
        try setBytesOption(ZMQ_CURVE_PUBLICKEY, Array(publicKey.utf8))
        try setBytesOption(ZMQ_CURVE_SECRETKEY, Array(secretKey.utf8))
    }
}

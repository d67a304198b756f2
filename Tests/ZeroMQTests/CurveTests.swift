import Testing

@testable import ZeroMQ

@Suite("CURVE keys")
struct CurveTests {
    @Test("the agreed digest is the same from either side, and differs for another key, another label or a bad key")
    func agreedDigest() throws {
        let server = try Curve.keyPair(), developer = try Curve.keyPair(), stranger = try Curve.keyPair()
        let label = Array("zflux test label".utf8)
        let fromDeveloper = try #require(Curve.agreedDigest(of: label, secretKey: developer.secretKey, peerPublicKey: server.publicKey))
        let fromServer = try #require(Curve.agreedDigest(of: label, secretKey: server.secretKey, peerPublicKey: developer.publicKey))
        #expect(fromDeveloper.count == 32)
        #expect(fromDeveloper == fromServer, "both halves of the agreement reach the same digest")
        let fromStranger = try #require(Curve.agreedDigest(of: label, secretKey: stranger.secretKey, peerPublicKey: server.publicKey))
        #expect(fromStranger != fromServer, "another key pair reaches another digest")
        #expect(Curve.agreedDigest(of: label + [33], secretKey: server.secretKey, peerPublicKey: developer.publicKey) != fromServer)
        // Knowing both public keys is not enough: a digest from the developer's public key in place of a secret differs.
        #expect(Curve.agreedDigest(of: label, secretKey: developer.publicKey, peerPublicKey: server.publicKey) != fromServer)
        #expect(Curve.agreedDigest(of: label, secretKey: "not a key", peerPublicKey: server.publicKey) == nil)
        // The all-zero public key (a point of low order) has no agreement to key anything with.
        let zero = try #require(Curve.encode([UInt8](repeating: 0, count: 32)))
        #expect(Curve.agreedDigest(of: label, secretKey: server.secretKey, peerPublicKey: zero) == nil)
    }
}

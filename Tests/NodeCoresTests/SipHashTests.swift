import NodeCores
import Testing

@Suite("SipHash")
struct SipHashTests {
    @Test("SipHash-2-4 gives the paper's test vector: key 00…0f, message 00…0e")
    func paperVector() {
        let k0 = UInt64(0x0706_0504_0302_0100), k1 = UInt64(0x0F0E_0D0C_0B0A_0908)
        #expect(SipHash.hash(Array(0..<15), k0: k0, k1: k1) == 0xa129_ca61_49be_45e5)
        #expect(SipHash.hash([], k0: k0, k1: k1) == 0x726f_db47_dd0e_0e31)
    }

    @Test("the client-scope secret's 16 bytes are k0 then k1, little-endian (the journal's file, the standby's welcome)")
    func clientScopeBytes() throws {
        let scope = ClientScope(k0: 0x0706_0504_0302_0100, k1: 0x0F0E_0D0C_0B0A_0908)
        var bytes: [UInt8] = [0xEE]
        scope.encode(into: &bytes)
        #expect(bytes == [0xEE] + Array(0..<16))
        #expect(ClientScope(decoding: bytes, at: 1) == scope)
        #expect(ClientScope(decoding: Array(bytes.dropLast()), at: 1) == nil, "15 bytes are not a secret")
    }
}

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
}

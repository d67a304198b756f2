import Foundation
import NIOCore
import Testing

@testable import Leadership

/// Answers as etcd 3.4.23's gateway sent them, and the requests it accepted.
@Suite("the v3 gateway's JSON: base64, int64 strings, left-out defaults")
struct GatewayJSONTests {
    let header = #""header":{"cluster_id":"324952591200643719","member_id":"3319814642761637952","revision":"5","raft_term":"2"}"#

    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    @Test("a keepalive for a lease etcd does not know: 200, wrapped in result, with no TTL")
    func keepAliveUnknownLease() throws {
        let answer = try decode(Wire.StreamedLeaseAnswer.self, #"{"result":{\#(header),"ID":"999"}}"# + "\n")
        #expect(answer.result?.ttl == 0)
        #expect(answer.result?.id == 999)
        #expect(answer.result?.header.revision == 5)
        #expect(answer.error == nil)
    }

    @Test("a lost campaign: succeeded left out, the holder in response_range, a 64-bit lease id as a string")
    func lostCampaign() throws {
        let json = """
            {\(header),"responses":[{"response_range":{"header":{"revision":"2"},"kvs":[{"key":"L3pmbHV4L2MvbGVhZGVy",\
            "create_revision":"2","mod_revision":"2","version":"1","value":"djE=","lease":"2324035591930247177"}],"count":"1"}}]}
            """
        let answer = try decode(Wire.TxnAnswer.self, json)
        #expect(!answer.succeeded)
        let holder = try #require(answer.responses.first?.range?.kvs.first.map(KeyValue.init))
        let expected = KeyValue(
            key: "/zflux/c/leader", value: Array("v1".utf8), createRevision: 2, modRevision: 2, version: 1, lease: 2_324_035_591_930_247_177)
        #expect(holder == expected)
    }

    @Test("a key with an empty value and no lease: both left out")
    func defaultsLeftOut() throws {
        let json = #"{\#(header),"kvs":[{"key":"eA==","create_revision":"4","mod_revision":"4","version":"1"}],"count":"1"}"#
        let answer = try decode(Wire.RangeAnswer.self, json)
        let found = try #require(answer.kvs.first.map(KeyValue.init))
        #expect(found.value == [] && found.lease == 0 && found.key == "x")
        #expect(try decode(Wire.RangeAnswer.self, "{\(header)}").kvs.isEmpty)
    }

    @Test("what is not the gateway's JSON is refused, not read as zero")
    func malformed() {
        #expect(throws: DecodingError.self) { try decode(Wire.RangeAnswer.self, #"{\#(header),"kvs":[{"key":"!!"}]}"#) }
        #expect(throws: DecodingError.self) { try decode(Wire.HeaderOnly.self, #"{"header":{"revision":"five"}}"#) }
        #expect(throws: DecodingError.self) { try decode(Wire.HeaderOnly.self, "Not Found") }
    }

    @Test("a campaign's answer with a revision of 0, none, or 2^39 and more is a failed campaign, not a win (a dispatcher trapped on it)")
    func campaignRevisionsChecked() throws {
        let lease = Lease(id: 7, ttlSeconds: 3)
        func outcome(_ json: String) throws -> Campaign {
            try EtcdClient.campaignOutcome(decode(Wire.TxnAnswer.self, json), key: "/zflux/c/leader", lease: lease)
        }
        #expect(try outcome(#"{"header":{"revision":"12"},"succeeded":true}"#) == .won(revision: 12))
        for header in [#""header":{"revision":"0"}"#, #""header":{}"#, #""header":{"revision":"600000000000"}"#, #""header":{"revision":"-3"}"#] {
            #expect(throws: EtcdError.self, "\(header)") { try outcome("{\(header),\"succeeded\":true}") }
        }
        // A win found on a retry, at the holder's create revision: checked the same way.
        let retried = """
            {\(self.header),"responses":[{"response_range":{"header":{"revision":"41"},"kvs":[{"key":"eA==","create_revision":"549755813888",\
            "mod_revision":"2","version":"1","value":"djE=","lease":"7"}]}}]}
            """
        #expect(throws: EtcdError.self) { try outcome(retried) }
        #expect(try outcome(retried.replacingOccurrences(of: "549755813888", with: "40")) == .won(revision: 40))
    }

    @Test("etcd's refusals: a missing lease has its own code; the rest carry the status and etcd's message")
    func refusals() {
        let missing = #"{"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5}"#
        let notFound = EtcdClient.refusal("/v3/kv/put", endpoint: "http://e", status: 404, answer: ByteBuffer(string: missing))
        #expect(notFound.code == .leaseNotFound && notFound.status == 404)
        let other = EtcdClient.refusal("/v3/nothing", endpoint: "http://e", status: 404, answer: ByteBuffer(string: "Not Found\n"))
        #expect(other.code == .rejected)
        #expect(other.message == "http://e/v3/nothing answered 404: Not Found")
    }

    @Test("a campaign's request: base64 key and value, int64s as strings, the .proto's field names")
    func campaignRequest() throws {
        let txn = Wire.Txn(
            compare: [.created("/k", at: 0)], success: [Wire.Operation(put: Wire.Put(key: "/k", value: [1, 2], lease: 7))],
            failure: [Wire.Operation(range: Wire.Range(key: "/k"))])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(txn), as: UTF8.self)
        #expect(
            json
                == #"{"compare":[{"create_revision":"0","key":"L2s=","target":"CREATE"}],"failure":[{"request_range":{"key":"L2s="}}],"success":[{"request_put":{"key":"L2s=","lease":"7","value":"AQI="}}]}"#
        )
    }
}

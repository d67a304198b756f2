import Foundation
import Logging
import Testing

@testable import Leadership

#if canImport(Glibc)
    import Glibc
#endif

/// The HTTP/1.1 client under the etcd client: which endpoints it takes, and how a member that does
/// not answer is passed over. (The real etcd is asked by `EtcdClientTests` and `LeaderElectionTests`.)
@Suite("etcd's gateway over plain HTTP/1.1")
struct GatewayHTTPTests {
    @Test("an endpoint is http://HOST[:PORT][/PATH]; anything else, https included, is refused when the client is made")
    func endpoints() throws {
        func parts(_ url: String) -> [String]? { GatewayHTTP.Endpoint(url).map { [$0.host, String($0.port), $0.path] } }
        #expect(parts("http://127.0.0.1:2379") == ["127.0.0.1", "2379", ""])
        #expect(parts("http://etcd") == ["etcd", "80", ""])
        #expect(parts("http://[::1]:2379/prefix/") == ["::1", "2379", "/prefix"])
        for bad in [
            "https://127.0.0.1:2379", "ftp://x", "http://", "http://:2379", "http://h:0", "http://h:99999", "http://h:x", "http://[::1",
            "127.0.0.1:2379",
        ] {
            #expect(GatewayHTTP.Endpoint(bad) == nil, "\(bad)")
        }
        let logger = Logger(label: "test")
        #expect(throws: EtcdError.self) { try EtcdClient(endpoints: ["https://127.0.0.1:2379"], logger: logger) }
        #expect(throws: EtcdError.self) { try EtcdClient(endpoints: ["127.0.0.1:2379"], logger: logger) }
    }

    @Test("a member that takes the connection but never answers fails within the timeout, and so does the next one; the error names both")
    func silentMembers() async throws {
        // Two listening sockets that are never accepted from: the kernel completes the connection, and
        // nothing ever answers.
        var ports: [Int] = []
        var descriptors: [Int32] = []
        defer { descriptors.forEach { _ = close($0) } }
        for _ in 0..<2 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            try #require(descriptor >= 0)
            descriptors.append(descriptor)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(bound == 0 && listen(descriptor, 8) == 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        let client = try EtcdClient(
            endpoints: ports.map { "http://127.0.0.1:\($0)" }, timeout: .milliseconds(300), logger: Logger(label: "test"))
        let started = ContinuousClock.now
        do {
            _ = try await client.grantLease(ttlSeconds: 5)
            Issue.record("a silent member answered")
        } catch let error as EtcdError {
            #expect(error.code == .unreachable, "\(error)")
            for port in ports { #expect("\(error)".contains("127.0.0.1:\(port)"), "\(error)") }
            #expect("\(error)".contains("no answer within"), "\(error)")
        }
        // A bound on a hang, with room for a loaded machine: two attempts of 0.3 s each.
        #expect(started.duration(to: .now) < .seconds(20))
    }
}

import Glibc

/// Whether `host` names this machine's loopback: `localhost`, or an address literal in 127.0.0.0/8 or
/// `::1` (brackets allowed). Parsed, never matched by prefix: a name such as `127.evil.example`
/// resolves wherever its owner points it, so it is not loopback.
package func isLoopbackHost(_ host: String) -> Bool {
    var name = host.lowercased()
    if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
    if name == "localhost" { return true }
    var v4 = in_addr()
    if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
    let bytes = withUnsafeBytes(of: v6) { Array($0) }
    // ::1, or an IPv4-mapped loopback (::ffff:127.x.y.z).
    let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127
    return mapped || bytes == [UInt8](repeating: 0, count: 15) + [1]
}

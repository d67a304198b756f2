import Foundation

/// Connects a TCP socket to 127.0.0.1:`port` with a receive timeout; nil when nothing listens.
func connectLoopback(_ port: Int, timeoutSeconds: Int = 5, receiveBufferBytes: Int32? = nil) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    // Before connecting, so the window the connection starts with is this small too.
    if var bytes = receiveBufferBytes { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size)) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        close(fd)
        return nil
    }
    return fd
}

/// A plain HTTP/1.1 GET to 127.0.0.1: (status, body), or nil when nothing answers within `timeoutSeconds`.
func httpGet(_ port: Int, _ path: String, headers: [String: String] = [:], timeoutSeconds: Int = 5) -> (Int, String)? {
    guard let fd = connectLoopback(port, timeoutSeconds: timeoutSeconds) else { return nil }
    defer { close(fd) }
    let extra = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
    let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\(extra)\r\n".utf8)
    _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { break }
        response += buffer[0..<count]
    }
    let text = String(decoding: response, as: UTF8.self)
    guard let statusText = text.split(separator: " ", maxSplits: 2).dropFirst().first, let status = Int(statusText) else { return nil }
    let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
    return (status, body)
}

/// Sends `request` (if any), then closes the connection with a TCP reset (SO_LINGER 0) without reading the answer.
func sendAndReset(_ port: Int, _ request: String) {
    guard let fd = connectLoopback(port) else { return }
    if !request.isEmpty { _ = Array(request.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
    var linger = Foundation.linger(l_onoff: 1, l_linger: 0)
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Foundation.linger>.size))
    close(fd)
}

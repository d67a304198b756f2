import FluxCore
import Foundation
import Testing
import ZeroMQ

/// Throws junk at an endpoint two ways: raw random bytes on a plain stream connection (a broken ZMTP
/// handshake), and, for ROUTER endpoints, well-formed ZeroMQ messages full of garbage frames.
enum Hostile {
    static func rawBytes(to endpoint: String, rounds: Int = 5) {
        for round in 0..<rounds {
            let junk = (0..<Int.random(in: 1...4096)).map { _ in UInt8.random(in: 0...255) }
            // Half the rounds start with a valid ZMTP greeting signature so the peer reads further.
            let bytes = round % 2 == 0 ? junk : [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F] + junk
            let fd = connectStream(endpoint)
            guard fd >= 0 else { continue }
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(fd)
        }
    }

    static func garbageMessages(to endpoint: String, count: Int = 200) throws {
        let socket = try Socket(.shared, .dealer)
        defer { socket.close() }
        try socket.connect(endpoint)
        var valid = Header(kind: .dispatch, clientID: 1, clientSeq: 1, actionType: "addTodo").encoded()
        for i in 0..<count {
            let frameCount = Int.random(in: 1...5)
            var frames = (0..<frameCount).map { _ in (0..<Int.random(in: 0...80)).map { _ in UInt8.random(in: 0...255) } }
            if i % 3 == 0 && frameCount >= 2 {
                // A nearly valid header gets past the magic check into the deeper ones.
                valid[Int.random(in: 2..<valid.count)] = UInt8.random(in: 0...255)
                frames[1] = valid
            }
            _ = try socket.send(frames, dontWait: true)
        }
        // Drain whatever came back (NACKs), bounded.
        var poller = Poller()
        poller.add(.socket(socket))
        while (try? poller.poll(timeoutMilliseconds: 200)) ?? 0 > 0 {
            while (try? socket.receive(dontWait: true)) ?? nil != nil {}
        }
    }

    private static func connectStream(_ endpoint: String) -> Int32 {
        if endpoint.hasPrefix("ipc://") {
            let path = String(endpoint.dropFirst(6))
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &addr.sun_path) { buf in
                for (i, byte) in path.utf8.prefix(buf.count - 1).enumerated() { buf[i] = byte }
            }
            let rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if rc != 0 { close(fd); return -1 }
            return fd
        }
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":"), let port = UInt16(endpoint[endpoint.index(after: colon)...])
        else { return -1 }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(port.bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if rc != 0 { close(fd); return -1 }
        return fd
    }
}

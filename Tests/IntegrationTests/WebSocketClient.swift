import Foundation
import NodeSupport

/// A minimal blocking WebSocket client over a loopback TCP socket, for the devtools' protocol test and
/// for driving Chromium through its DevTools protocol: the upgrade, masked text frames out, unmasked
/// frames in. Nothing of the server's code is shared with it.
final class WebSocketClient {
    struct Refused: Error, CustomStringConvertible {
        let status: Int
        let body: String
        var description: String { "upgrade refused with \(status): \(body)" }
    }

    let fd: Int32
    private var buffer: [UInt8] = []
    /// Whether bytes already read wait in the buffer (a frame may be there with nothing left to read
    /// on the socket).
    var hasBuffered: Bool { !buffer.isEmpty }
    /// The server ended the stream (or reset it); a receive timeout does not set it.
    private(set) var ended = false

    /// Connects and upgrades; throws ``Refused`` with the HTTP status when the server says no.
    /// `receiveBufferBytes`: the socket's receive buffer, set before it connects (a small one makes a
    /// client that does not read hold little, so the server's side fills).
    init(
        port: Int, path: String = "/ws", host: String? = nil, origin: String? = nil, timeoutSeconds: Int = 10, receiveBufferBytes: Int32? = nil
    ) throws {
        guard let fd = connectLoopback(port, timeoutSeconds: timeoutSeconds, receiveBufferBytes: receiveBufferBytes) else {
            throw NodeError("nothing listens on port \(port)")
        }
        self.fd = fd
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString())\r\n"
        request += "Sec-WebSocket-Version: 13\r\n"
        if let origin { request += "Origin: \(origin)\r\n" }
        request += "\r\n"
        writeAll(Array(request.utf8))
        // The answer's head, up to the blank line; what follows it is the first frames.
        while true {
            if let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<end.upperBound)
                let status = head.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
                guard status == 101 else {
                    while fill() {}
                    let body = String(decoding: buffer, as: UTF8.self)
                    // Not closed here: an initializer that throws once every property is set still runs
                    // deinit, which closes it. A second close would close whatever another thread opened
                    // under the number meanwhile (a child's pipe failed to spawn with EBADF in CI).
                    throw Refused(status: status, body: body)
                }
                return
            }
            guard fill() else {
                throw NodeError("the connection closed during the upgrade")
            }
        }
    }

    deinit { Glibc.close(fd) }

    /// Reads what is there into the buffer; false at the end of the stream or the receive timeout.
    @discardableResult
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = read(fd, &chunk, chunk.count)
        guard count > 0 else {
            if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { ended = true }
            return false
        }
        buffer += chunk[0..<count]
        return true
    }

    private func writeAll(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a server that closes while a frame is still going out (one over its size
            // cap, say) must end this write with EPIPE, not end the test process with SIGPIPE.
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Sends one frame, masked as a client must.
    func send(opcode: UInt8 = 0x1, _ payload: [UInt8], fin: Bool = true) {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        switch payload.count {
        case ..<126: frame.append(0x80 | UInt8(payload.count))
        case ..<65536: frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        default: frame += [0x80 | 127] + (0..<8).reversed().map { UInt8((UInt64(payload.count) >> ($0 * 8)) & 0xff) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $1 ^ mask[$0 % 4] }
        writeAll(frame)
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    /// The next whole frame: (opcode, payload), or nil when the stream ended or nothing came in time.
    func receive() -> (opcode: UInt8, payload: [UInt8])? {
        func need(_ count: Int) -> Bool {
            while buffer.count < count { guard fill() else { return false } }
            return true
        }
        guard need(2) else { return nil }
        var length = Int(buffer[1] & 0x7f)
        var offset = 2
        if length == 126 {
            guard need(4) else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            offset = 4
        } else if length == 127 {
            guard need(10) else { return nil }
            length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard need(offset + length) else { return nil }
        let frame = (opcode: buffer[0] & 0x0f, payload: Array(buffer[offset..<offset + length]))
        buffer.removeSubrange(..<(offset + length))
        return frame
    }

    /// Text frames until one satisfies `match` (each as a JSON object), or nil at the deadline or the end.
    func receiveJSON(until deadline: ContinuousClock.Instant, where match: ([String: Any]) -> Bool) -> [String: Any]? {
        while ContinuousClock.now < deadline {
            guard let frame = receive() else { return nil }
            guard frame.opcode == 0x1, let object = try? JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any] else { continue }
            if match(object) { return object }
        }
        return nil
    }

    /// Whether the server ends the connection (a close frame, or the stream's end) before the deadline,
    /// reading and dropping whatever else comes first.
    func closedByServer(before deadline: ContinuousClock.Instant) -> Bool {
        while ContinuousClock.now < deadline {
            guard let frame = receive() else {
                if ended { return true }
                continue
            }
            if frame.opcode == 0x8 { return true }
        }
        return false
    }
}

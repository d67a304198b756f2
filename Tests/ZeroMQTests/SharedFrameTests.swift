import Foundation
import Testing

@testable import ZeroMQ

@Suite("Frames shared by many sends")
struct SharedFrameTests {
    @Test("a 24 MiB frame sent to three peers is one copy, counted until each has read it or left", arguments: ["inproc", "ipc", "tcp"])
    func countedUntilReleased(transport: String) throws {
        let router = try Socket(.shared, .router)
        try router.setOption(.routerMandatory, 1)
        try router.bind(endpoint(transport))
        let bound = try router.lastEndpoint
        defer { router.close(); removeSocketFile(bound) }
        var peers: [Socket] = []
        defer { for peer in peers { peer.close() } }
        // Each peer says hello, so the router knows its id.
        var ids: [[UInt8]] = []
        for _ in 0..<3 {
            let peer = try Socket(.shared, .dealer)
            try peer.setOption(.linger, 0)
            // Small kernel buffers: the frame cannot pass whole into the kernel and leave libzmq.
            try peer.setOption(.receiveBuffer, 4096)
            try peer.setOption(.receiveHighWaterMark, 1)
            try peer.connect(bound)
            peers.append(peer)
            _ = try peer.send([[1]])
            ids.append(try #require(try receive(router)?.first))
        }
        let ledger = SharedFrame.Ledger()
        var payload = [UInt8](repeating: 0x5A, count: 24 << 20)
        (payload[0], payload[payload.count / 2], payload[payload.count - 1]) = (1, 2, 3)
        func arrived(_ frames: [[UInt8]]?) -> Bool {
            guard let frames, frames.count == 2, frames[0] == Array("head".utf8), frames[1].count == payload.count else { return false }
            return [0, payload.count / 2, payload.count - 1].allSatisfy { frames[1][$0] == payload[$0] }
        }
        do {
            let frame = SharedFrame(copying: payload, ledger: ledger)
            for id in ids { #expect(try router.send([id, Array("head".utf8)], shared: frame)) }
        }
        // One copy for three peers. Over inproc it waits in their queues until each reads it; over
        // ipc and tcp a peer's own I/O thread may have taken it whole already.
        if transport == "inproc" { #expect(ledger.bytes == payload.count, "one copy, waiting in three queues") }
        #expect(ledger.bytes == 0 || ledger.bytes == payload.count, "never a copy per peer")
        #expect(arrived(try receive(peers[0])))
        #expect(arrived(try receive(peers[1])))
        if transport == "inproc" { #expect(ledger.bytes == payload.count, "the third peer has not read it yet") }
        // The third leaves without reading: libzmq drops its queue, and the copy with it, once the
        // router's thread sees the peer gone (at its next call into libzmq).
        peers.removeLast().close()
        let deadline = Date().addingTimeInterval(10)
        while ledger.bytes != 0 && Date() < deadline {
            _ = try router.receive(dontWait: true)
            usleep(1000)
        }
        #expect(ledger.bytes == 0, "the copy is freed once every peer read it or left")
    }

    @Test("a send that does not go (no such peer, or a full queue) drops its reference at once")
    func failedSendReleases() throws {
        let router = try Socket(.shared, .router)
        try router.setOption(.routerMandatory, 1)
        try router.bind(endpoint("inproc"))
        defer { router.close() }
        let ledger = SharedFrame.Ledger()
        do {
            let frame = SharedFrame(copying: [1, 2, 3], ledger: ledger)
            #expect(throws: ZMQError.self) { try router.send([[9]], shared: frame, dontWait: true) }
        }
        #expect(ledger.bytes == 0)
    }
}

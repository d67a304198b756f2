import Examples
import FluxCore
import FluxTesting
import Foundation
import NodeSupport
import Testing
import ZeroMQ

/// Protocol 3's batches between real processes: a pipelining client, the `zflux` dispatcher, its
/// stores, and a raw subscriber standing in for any other reader of the actions PUB.
@Suite("Real processes: batches on the actions PUB and the intake", .serialized, .timeLimit(.minutes(3)))
struct BatchingProcessTests {
    @Test(
        "pipelined dispatches come back as ACK-BATCH only to the client that asked; the actions PUB carries ACTION-BATCH whose entries are exactly seqs 1…N in order; the store applies each once"
    )
    func batchesEndToEnd() async throws {
        let cluster = try ClusterProcess(transport: "ipc")
        defer { cluster.stop() }
        try cluster.waitUntilReady()
        let topology = try #require(cluster.topology)
        let (batchedCount, plainCount) = (600, 200)
        let payload = try JSONPayloadCodec().encode(Counter.Action.addTapped(amount: 3))

        let outcome = try await onThread { () throws -> (kinds: [MessageKind: Int], seqs: [UInt64], ackKinds: [[MessageKind]], acked: [Int]) in
            let subscriber = try SocketDefaults.subscriber(.shared)
            defer { subscriber.close() }
            try subscriber.subscribe()
            try subscriber.connect(topology.dispatcher.actions)
            // The subscription is in place once a heartbeat comes through it.
            try waitFor(subscriber, deadline: .now + .seconds(60)) { $0.kind == .heartbeat }

            let clients = try (0..<2).map { _ in
                let socket = try SocketDefaults.dealer(.shared)
                try socket.connect(topology.dispatcher.intake)
                return socket
            }
            defer { for socket in clients { socket.close() } }
            // Client 0 asks for batched answers and sends everything at once; client 1 does not ask.
            for (index, count) in [batchedCount, plainCount].enumerated() {
                for clientSeq in 1...count {
                    let header = Header(
                        kind: .dispatch, flags: index == 0 ? .batchReplies : [], clientID: UInt64(100 + index), clientSeq: UInt64(clientSeq),
                        actionType: "addTapped")
                    _ = try clients[index].send([Array("counter".utf8), header.encoded(), payload])
                }
            }
            var ackKinds: [[MessageKind]] = [[], []]
            var acked = [0, 0]
            var kinds: [MessageKind: Int] = [:]
            var seqs: [UInt64] = []
            let deadline = ContinuousClock.now + .seconds(30)
            while (acked[0] < batchedCount || acked[1] < plainCount || seqs.count < batchedCount + plainCount) && ContinuousClock.now < deadline {
                var poller = Poller()
                for socket in clients { poller.add(.socket(socket)) }
                let subscriberIndex = poller.add(.socket(subscriber))
                _ = try poller.poll(timeoutMilliseconds: 100)
                for index in 0..<2 where poller.isReadable(index) {
                    while let frames = try clients[index].receive(dontWait: true) {
                        let reply = try Message(frames: frames)
                        ackKinds[index].append(reply.kind)
                        acked[index] += try AckBatch.unpack(reply).filter { $0.kind == .ack }.count
                    }
                }
                if poller.isReadable(subscriberIndex) {
                    while let frames = try subscriber.receive(dontWait: true) {
                        let message = try Message(frames: frames)
                        kinds[message.kind, default: 0] += 1
                        seqs += try ActionBatch.unpack(message).filter { $0.kind == .action }.map(\.header.seq)
                    }
                }
            }
            return (kinds, seqs, ackKinds, acked)
        }
        #expect(outcome.acked == [batchedCount, plainCount], "every dispatch answered once")
        #expect(outcome.ackKinds[0].contains(.ackBatch), "the pipelining client that asked got ACK-BATCH")
        #expect(!outcome.ackKinds[1].contains(.ackBatch), "the client that did not ask got single ACKs only")
        #expect((outcome.kinds[.actionBatch] ?? 0) > 0, "bursts went out as ACTION-BATCH")
        #expect(
            outcome.seqs == Array(1...UInt64(batchedCount + plainCount)), "unpacked, the stream is every seq once, in order")
        let counter = try await waitForState(cluster, "counter", version: UInt64(batchedCount + plainCount), as: Counter.State.self)
        #expect(counter.count == 3 * (batchedCount + plainCount), "the store applied each action exactly once")
    }
}

/// Reads `socket` until a message satisfies `done`, or throws at `deadline`.
private func waitFor(_ socket: Socket, deadline: ContinuousClock.Instant, _ done: (Message) -> Bool) throws {
    while ContinuousClock.now < deadline {
        var poller = Poller()
        poller.add(.socket(socket))
        guard try poller.poll(timeoutMilliseconds: 100) > 0 else { continue }
        while let frames = try socket.receive(dontWait: true) {
            if let message = try? Message(frames: frames), done(message) { return }
        }
    }
    throw NodeError("nothing arrived on the subscription before the deadline")
}

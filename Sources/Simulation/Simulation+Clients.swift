import FluxCore

/// The clients: each dispatches the mix's actions (a few unanswered at a time) during the fault
/// phase and retries what goes unanswered, with the same client seq, until it is answered. Every
/// ACK is checked: one seq per dispatch, one dispatch per seq.
extension Simulation {
    final class ClientShell {
        let id: UInt64
        var nextClientSeq: UInt64 = 1
        var outstanding: [UInt64: (message: Message, sentAt: UInt64)] = [:]
        var issued = 0
        var retryScheduled = false
        /// The dispatcher it sends to (HA: the leader, as it last looked it up).
        var target = 0
        init(id: UInt64) { self.id = id }
    }

    func clientNext(_ index: Int) {
        let client = clients[index]
        guard now < options.faultPhaseMicros, client.issued < options.actionsPerClient else { return }
        if client.outstanding.count < 4 {
            // A batching client (odd index) sends what it has queued, one to three, as one DISPATCH-BATCH.
            let batching = index % 2 == 1
            let count = min(batching ? rng.int(1...3) : 1, 4 - client.outstanding.count, options.actionsPerClient - client.issued)
            var messages: [Message] = []
            for _ in 0..<count {
                client.issued += 1
                let (app, type, payload) = nextAction()
                let message = Message(
                    topic: app,
                    header: Header(
                        kind: .dispatch, flags: batching ? .batchReplies : [], clientID: client.id, clientSeq: client.nextClientSeq,
                        actionType: type), payload: payload)
                client.outstanding[client.nextClientSeq] = (message, now)
                client.nextClientSeq += 1
                messages.append(message)
            }
            send(
                .intake(peer: Simulation.peerID(.client(index), 1), messages.count == 1 ? messages[0] : DispatchBatch.message(messages)),
                from: .client(index), to: .dispatcher(client.target))
            if !client.retryScheduled {
                client.retryScheduled = true
                queue.schedule(.clientRetry(index), at: now + 200_000)
            }
        }
        queue.schedule(.clientNext(index), at: now + rng.micros(2_000...25_000))
    }

    func nextAction() -> (String, String, [UInt8]) {
        func payload(_ app: String, _ type: String, _ json: String) -> [UInt8] {
            (try? apps[app]?.wirePayload(type: type, argumentsJSON: Array(json.utf8), format: .binary)) ?? []
        }
        let mix = options.apps.mix
        let draw = rng.int(0...(mix.totalWeight + SimulatedApps.echoWeight - 1))
        guard let entry = mix.entry(at: draw) else {
            nextPing += 1
            return ("echo", "ping", Array("\(nextPing)".utf8))
        }
        let arguments = entry.arguments(&rng)
        return (entry.app, entry.type, payload(entry.app, entry.type, arguments))
    }

    func clientRetry(_ index: Int) {
        let client = clients[index]
        client.retryScheduled = false
        if options.ha && !client.outstanding.isEmpty { client.target = dispatcherTarget(for: .client(index), current: client.target) }
        var again: [Message] = []
        for (clientSeq, entry) in client.outstanding.sorted(by: { $0.key < $1.key }) where now - entry.sentAt >= 200_000 {
            client.outstanding[clientSeq]?.sentAt = now
            again.append(entry.message)
        }
        // A batching client sends its retries together, as it sends anything it has queued.
        for message in index % 2 == 1 && again.count > 1 ? [DispatchBatch.message(again)] : again {
            send(.intake(peer: Simulation.peerID(.client(index), 1), message), from: .client(index), to: .dispatcher(client.target))
        }
        if !client.outstanding.isEmpty {
            client.retryScheduled = true
            queue.schedule(.clientRetry(index), at: now + 200_000)
        }
    }

    func clientReply(_ index: Int, _ reply: Message) {
        let client = clients[index]
        if options.ha, reply.kind == .nack, reply.header.flags.contains(.retryLater), reply.header.clientID == client.id,
            client.outstanding[reply.header.clientSeq] != nil
        {
            // Not the leader (any more): look the leader up; the retry goes there.
            client.target = dispatcherTarget(for: .client(index), current: client.target)
            return
        }
        guard reply.header.clientID == client.id,
            client.outstanding.removeValue(forKey: reply.header.clientSeq) != nil
                || ackedSeq[[client.id, reply.header.clientSeq]] != nil
        else { return }
        guard reply.kind == .ack else { return }
        let seq = reply.header.seq
        // An ACK still in flight from a history the operator then threw away (a restore): not a promise now.
        if staleEpochs.contains(HistoryID(rawValue: reply.header.history).epoch) && seq > staleAbove { return }
        result.invariantChecks += 1
        if let first = ackedSeq[[client.id, reply.header.clientSeq]], first != seq {
            fail(
                "dedup",
                "client \(index) (id \(client.id)) dispatch \(reply.header.clientSeq) was acknowledged as seq \(first) and again as seq \(seq)")
            return
        }
        if let other = acknowledged[seq], other != (client.id, reply.header.clientSeq) {
            fail("sequencing", "seq \(seq) was acknowledged to two dispatches")
            return
        }
        ackedSeq[[client.id, reply.header.clientSeq]] = seq
        acknowledged[seq] = (client.id, reply.header.clientSeq)
    }

    func clientReceives(_ delivery: Delivery, client index: Int) {
        guard case .intakeReply(let message) = delivery else { return }
        record(18, Node.client(index).code, message.header.seq, "\(name(of: .client(index))) receives \(message.kind) seq \(message.header.seq)")
        // Odd clients ask for their ACKs batched: each entry is checked as the ACK it stands for.
        guard let replies = try? AckBatch.unpack(message) else {
            fail("protocol", "\(name(of: .client(index))) received an ACK-BATCH that does not decode")
            return
        }
        if message.kind == .ackBatch, index % 2 == 0 { fail("protocol", "\(name(of: .client(index))) got an ACK-BATCH it did not ask for") }
        for reply in replies { clientReply(index, reply) }
    }
}

import FluxCore
import Foundation

/// The trace: every event mixed into the seed's hash, and, when a trace is kept, told as a sentence
/// that names the nodes, for reading what a failing seed did.
extension Simulation {
    /// One event: mixed into the trace hash as numbers (so a seed's hash stays what it was), kept in
    /// the trace as the sentence `text`.
    func record(_ kind: UInt64, _ a: UInt64, _ b: UInt64, _ text: @autoclosure () -> String) {
        hash.mix(now)
        hash.mix(kind << 48 | a)
        hash.mix(b)
        guard options.traceLength > 0 || echoesTrace else { return }
        let line = text()
        if !line.isEmpty { note(line) }
    }

    /// Who sent a DISPATCH: a client by its index, or a store's effects.
    func sender(of message: Message) -> String {
        if let index = clients.firstIndex(where: { $0.id == message.header.clientID }) {
            return "client \(index) (id \(message.header.clientID))"
        }
        return "client id \(message.header.clientID) (a store's effects)"
    }

    /// A node as the trace names it: `dispatcher`, `store todo`, `view of stats`, `client 2`.
    func name(of node: Node) -> String {
        switch node {
        case .dispatcher(let index): options.ha ? "dispatcher \(index + 1)" : "dispatcher"
        case .leaseService: "the lease service"
        case .store(let index): "store \(stores[index].spec.name)"
        case .view(let index): "view of \(stores[views[index].store].spec.name)"
        case .client(let index): "client \(index)"
        }
    }

    func note(_ text: @autoclosure () -> String) {
        if echoesTrace {
            FileHandle.standardError.write(Data("seed \(seed)  \(now / 1000).\(String(format: "%03d", now % 1000)) ms  \(text())\n".utf8))
        }
        guard options.traceLength > 0 else { return }
        trace.append("\(now / 1000).\(String(format: "%03d", now % 1000)) ms  \(text())")
        if trace.count > options.traceLength { trace.removeFirst(trace.count - options.traceLength) }
    }

    func fail(_ invariant: String, _ detail: String) {
        guard result.failure == nil else { return }
        result.failure = SimulationFailure(invariant: invariant, detail: detail, atMicros: now, trace: trace)
    }
}

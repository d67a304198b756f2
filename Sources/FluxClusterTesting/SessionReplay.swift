import Devtools
import FluxCore
import Foundation

/// Where a recorded session and today's reducers part ways.
public struct SessionMismatch: Equatable, Sendable, CustomStringConvertible {
    public var seq: UInt64
    public var store: String
    /// The action at `seq`, as `app.type`.
    public var action: String
    /// The state the session recorded after `seq`, and the one the reducer gives now (JSON).
    public var recorded: JSONValue
    public var reduced: JSONValue

    public var description: String {
        "seq \(seq) (\(action)), store '\(store)': recorded \(SessionMismatch.text(recorded)), reduced \(SessionMismatch.text(reduced))"
    }

    static func text(_ value: JSONValue) -> String { String(decoding: value.jsonBytes, as: UTF8.self) }
}

extension Session {
    /// Runs the session's actions through `apps`' reducers (no effects), from each store's recorded
    /// state before them, and returns where each store first differs from the recording: after each
    /// action, the stores it changed must hold what was recorded, and the others must be unchanged.
    /// (Past its first difference a store is not checked again: every later state would differ too.)
    /// Empty: today's reducers reproduce the recording exactly.
    ///
    /// ```swift
    /// @Test func theBugFromTicket42() throws {
    ///     let session = try Session.load(Bundle.module.path(forResource: "ticket-42", ofType: "session")!)
    ///     #expect(try session.verify(apps: Catalog.apps) == [])
    /// }
    /// ```
    public func verify(apps: [any AnyApp]) throws -> [SessionMismatch] {
        let replicas = try stores.map { store in
            guard let app = apps.first(where: { $0.name == store.app }) else {
                throw RewindError("the session's store '\(store.name)' runs app '\(store.app)', which is not among the apps given")
            }
            return try Rewind.Replica(name: store.name, app: app, format: codec, version: store.version, snapshot: [UInt8](store.snapshot))
        }
        var current: [String: JSONValue] = [:]
        for store in stores {
            guard current.updateValue(store.state, forKey: store.name) == nil else {
                throw RewindError("session: store '\(store.name)' appears twice")
            }
        }
        var mismatches: [SessionMismatch] = []
        var diverged: Set<String> = []
        for action in actions {
            let message = action.message(history: 0)
            for replica in replicas where replica.version + 1 == action.seq {
                try replica.apply(message)
                guard !diverged.contains(replica.name) else { continue }
                let reduced = JSONValue(parsing: try replica.stateJSON())
                let recorded = action.changed[replica.name] ?? current[replica.name] ?? .null
                current[replica.name] = recorded
                if reduced != recorded {
                    diverged.insert(replica.name)
                    mismatches.append(
                        SessionMismatch(
                            seq: action.seq, store: replica.name, action: "\(action.app).\(action.type)", recorded: recorded, reduced: reduced))
                }
            }
        }
        return mismatches
    }
}

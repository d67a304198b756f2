import FluxCore
import Foundation
import NodeCores
import NodeSupport
import Synchronization

/// Prints view updates, one whole update at a time even with several views on several threads.
///
/// JSON lines report every version the view learns (scripts wait for versions): a new state, or a
/// store's heartbeat saying the state is current through a later seq. Rendered output skips updates that
/// change nothing visible.
public final class UpdatePrinter: Sendable {
    static let lock = Mutex<Void>(())
    let app: any AnyApp
    let json: Bool
    /// A view of a selection: its updates carry the selected value as JSON.
    let select: StatePath?
    private let lastShown = Mutex<(state: [UInt8], connection: ViewUpdate.Connection)?>(nil)

    public init(app: any AnyApp, json: Bool, select: StatePath? = nil) {
        self.app = app
        self.json = json
        self.select = select
    }

    /// The update's state (or selected value) as JSON text.
    func stateJSON(_ update: ViewUpdate) -> String {
        if select != nil { return String(decoding: update.state, as: UTF8.self) }
        return (try? app.stateJSON(fromWire: update.state)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    public func print(_ update: ViewUpdate) {
        let text: String
        if let rejection = update.rejection {
            text =
                json
                ? "{\"store\":\"\(update.store)\",\"rejected\":{\"seq\":\(rejection.seq),\"type\":\"\(rejection.actionType)\",\"reason\":\(quotedJSON(rejection.reason))}}"
                : "✗ \(update.store) rejected \(rejection.actionType) (seq \(rejection.seq)): \(rejection.reason)"
            UpdatePrinter.lock.withLock { _ in UpdatePrinter.write(text) }
            return
        }
        if json {
            let state = stateJSON(update)
            let connection: String =
                switch update.connection {
                case .live: "live"
                case .catchingUp: "catching-up"
                case .stale: "stale"
                }
            if let select {
                // `changed_at`: the seq that last changed the selected part.
                text =
                    "{\"store\":\"\(update.store)\",\"select\":\(quotedJSON(select.description)),\"version\":\(update.currentThrough),"
                    + "\"changed_at\":\(update.version),\"connection\":\"\(connection)\",\"value\":\(state)}"
            } else {
                text = "{\"store\":\"\(update.store)\",\"version\":\(update.currentThrough),\"connection\":\"\(connection)\",\"state\":\(state)}"
            }
        } else {
            let unchanged = lastShown.withLock { last in
                defer { last = (update.state, update.connection) }
                return last?.state == update.state && last?.connection == update.connection
            }
            if unchanged { return }
            let body = select != nil ? stateJSON(update) : (try? app.render(wire: update.state)) ?? "(state cannot be decoded)"
            let title = select.map { "\(update.store) · \($0)" } ?? update.store
            text = "── \(title) · version \(update.currentThrough) · \(update.connection) ──\n\(body)\n"
        }
        UpdatePrinter.lock.withLock { _ in UpdatePrinter.write(text) }
    }
}

extension UpdatePrinter {
    /// One line to stdout, flushed at once (piped output arrives line by line).
    static func write(_ line: String) { StandardOutput.line(line) }
}

/// A string as a JSON string literal.
public func quotedJSON(_ text: String) -> String {
    String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
}

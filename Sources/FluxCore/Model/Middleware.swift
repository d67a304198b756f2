/// One step of an app's middleware chain, run by the dispatcher on every action of the app before it is
/// sequenced (Redux's and ReSwift's middleware, at the one place every action passes through).
///
/// The chain runs in order after the action is decoded and passed the app's `validate`. A step may
/// refuse the action (throw: the dispatcher NACKs with the reason and nothing is sequenced), rewrite it
/// (the rewritten action is what the journal and every store see), log it, or count it. Steps run on
/// the dispatcher's intake thread, once per dispatch: keep them quick and free of I/O.
///
/// ```swift
/// middleware: [
///     .enrich { if case .addTodo(let title) = $0 { $0 = .addTodo(title: title.trimmed) } },
///     .validate { if case .addTodo(let title) = $0, title.count < 3 { "too short" } else { nil } },
///     .log(), .count(),
/// ]
/// ```
public struct Middleware<Action: Sendable>: Sendable {
    public typealias Body = @Sendable (inout Action, MiddlewareContext) throws(ActionError) -> Void

    /// How the step shows in logs and counts.
    public let name: String
    /// Whether the step may change the action (the dispatcher re-encodes the payload only then).
    public let rewrites: Bool
    let body: Body

    public init(_ name: String, rewrites: Bool, _ body: @escaping Body) {
        self.name = name
        self.rewrites = rewrites
        self.body = body
    }

    /// Refuses an action when `check` gives a reason.
    public static func validate(_ name: String = "validate", _ check: @escaping @Sendable (Action) -> String?) -> Middleware {
        Middleware(name, rewrites: false) { action, _ throws(ActionError) in
            if let reason = check(action) { throw ActionError(reason) }
        }
    }

    /// Rewrites an action before it is sequenced (normalising input, filling in defaults).
    public static func enrich(_ name: String = "enrich", _ transform: @escaping @Sendable (inout Action) -> Void) -> Middleware {
        Middleware(name, rewrites: true) { action, _ in transform(&action) }
    }

    /// Logs each action through the dispatcher's logger, with its app and client.
    public static func log(_ name: String = "log") -> Middleware {
        Middleware(name, rewrites: false) { action, context in context.log("\(action)") }
    }

    /// Counts actions under a key (by default `app.caseName`); the dispatcher's STATUS and `/metrics`
    /// show the counts.
    public static func count(_ name: String = "count", by key: (@Sendable (Action) -> String)? = nil) -> Middleware {
        Middleware(name, rewrites: false) { action, context in
            context.count(key.map { $0(action) } ?? "\(context.app).\(ActionCoding.caseName(of: action))")
        }
    }
}

/// What hosts a middleware chain (the dispatcher, or a test): where its logs and counts go.
public protocol MiddlewareHost: AnyObject {
    func middlewareLog(_ message: String, step: String, app: String, client: UInt64)
    func middlewareCount(_ key: String)
}

/// Where an action the dispatcher is admitting came from, as far as the dispatcher can prove it.
public enum ActionOrigin: Sendable, Equatable, CustomStringConvertible {
    /// A client: `zflux dispatch`, a script, a bench, a view's key press.
    case client
    /// One of the app's effects, sent by a store's effect client with the cluster's effect token.
    case effect
    /// An action an operator released from quarantine (`zflux quarantine release`), sent again by
    /// the dispatcher itself.
    case release
    /// The cluster has no effect token (tcp without `[security]`), so a client and an effect look the same.
    case unverified

    public var description: String {
        switch self {
        case .client: "client"
        case .effect: "effect"
        case .release: "release"
        case .unverified: "unverified"
        }
    }
}

/// What a middleware step knows besides the action.
public struct MiddlewareContext {
    /// The app the action was dispatched to.
    public let app: String
    /// The client id in the DISPATCH header (0: none given).
    public let client: UInt64
    /// Where the action came from: a client, an effect, a release from quarantine.
    public let origin: ActionOrigin
    let step: String
    unowned let host: any MiddlewareHost

    public func log(_ message: String) { host.middlewareLog(message, step: step, app: app, client: client) }
    public func count(_ key: String) { host.middlewareCount(key) }
}

/// A host that keeps what the chain logged and counted: for tests of middleware, and for callers that
/// run a chain outside the dispatcher.
public final class RecordingMiddlewareHost: MiddlewareHost {
    public private(set) var logged: [String] = []
    public private(set) var counts: [String: UInt64] = [:]
    public init() {}
    public func middlewareLog(_ message: String, step: String, app: String, client: UInt64) { logged.append("\(app) \(step): \(message)") }
    public func middlewareCount(_ key: String) { counts[key, default: 0] += 1 }
}

extension Array {
    /// Runs a middleware chain on `action` in order; the first refusal ends it.
    public func run<Action>(
        on action: inout Action, app: String, client: UInt64, origin: ActionOrigin = .client, host: any MiddlewareHost
    ) throws(ActionError) where Element == Middleware<Action> {
        for step in self {
            try step.body(&action, MiddlewareContext(app: app, client: client, origin: origin, step: step.name, host: host))
        }
    }
}

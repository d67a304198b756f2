@_spi(Simulation) import FluxCore

/// What a dispatcher admits by, read once from its rules: its apps by name, each app's actions only
/// its effects may send, and the payload limits. Admission and the schedule book both ask it.
struct AppCatalog {
    /// Each app by name, with its in-place admission when it has one (``AdmitsInPlace``), found once: a
    /// cast per action would copy the app into a new existential box.
    let apps: [String: (app: any AnyApp, inPlace: (any AdmitsInPlace)?)]
    /// Each app's actions that only its effects may send (with ``DispatcherRules/effectToken`` set).
    let effectOnly: [String: Set<String>]
    let effectToken: UInt64?
    let maxPayloadBytes: Int
    let maxPayloadBytesByType: [String: Int]

    init(_ rules: DispatcherRules) {
        self.apps = Dictionary(rules.apps.map { ($0.name, ($0, $0 as? any AdmitsInPlace)) }, uniquingKeysWith: { first, _ in first })
        self.effectOnly =
            rules.effectToken == nil
            ? [:]
            : Dictionary(
                rules.apps.map { app in (app.name, Set(app.describe().actions.filter { $0.origin == .effect }.map(\.type))) },
                uniquingKeysWith: { first, _ in first })
        self.effectToken = rules.effectToken
        self.maxPayloadBytes = rules.maxPayloadBytes
        self.maxPayloadBytesByType = rules.maxPayloadBytesByType
    }

    /// The most payload `app`'s `type` may carry.
    func limit(app: String, type: String) -> Int {
        // The key is built only when a limit per type is set: "app.type" past 15 bytes is an allocation.
        maxPayloadBytesByType.isEmpty ? maxPayloadBytes : maxPayloadBytesByType["\(app).\(type)"] ?? maxPayloadBytes
    }

    /// The largest schedule request taken: one carrying the largest action any app may send (as base64,
    /// four bytes for three), with room for its names; the action inside is held to its own limit.
    var scheduleRequestLimit: Int { (max(maxPayloadBytes, maxPayloadBytesByType.values.max() ?? 0) / 3 + 1) * 4 + 65_536 }

    /// Whether `sent` lacks the effect token that `app`'s `type` needs (an action its catalog marks .effect).
    func refuses(_ sent: Header, app: String, type: String) -> Bool {
        guard let effectToken, sent.ref != effectToken else { return false }
        return effectOnly[app]?.contains(type) == true
    }

    /// Where a DISPATCH came from, for the app's middleware: only the effect token tells an effect's apart.
    func origin(of sent: Header, principal: [UInt8]?) -> ActionOrigin {
        if principal == QuarantineBook.releasePrincipal { return .release }
        guard let effectToken else { return .unverified }
        return sent.ref == effectToken ? .effect : .client
    }
}

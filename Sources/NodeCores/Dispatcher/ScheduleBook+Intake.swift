@_spi(Simulation) import FluxCore

/// The schedule book's two verdicts at the intake and at a turn: whether a request on
/// ``Schedules/topic`` is taken (and the payload to journal), and which schedules fire now.
extension ScheduleBook {
    /// The book `log` makes by the schedules it makes, cancels and fires (``DispatcherBoot`` reads it
    /// at start). `forgettingFires` is the `schedule-fires-twice` canary's: a leader that does not see
    /// what fired before it fires it again. From a checkpoint's book (``DispatcherCheckpoint``), only
    /// the records from `checkpoint.from` on are read.
    init(
        rebuiltFrom log: any ActionLog, maxPendingBytes: Int, forgettingFires: Bool = false, checkpoint: (book: ScheduleBook, from: UInt64)? = nil
    ) throws {
        var book = checkpoint?.book ?? ScheduleBook(maxPendingBytes: maxPendingBytes)
        try log.forEachScheduling(from: checkpoint?.from ?? log.firstSeq) { action in
            if forgettingFires && action.header.flags.contains(.scheduled) { return }
            book.note(action.topic, header: action.header, payload: action.payload)
        }
        self = book
    }

    /// Checks a request on ``Schedules/topic`` as the intake takes it, and returns the payload to
    /// journal: a schedule whose action its app admits (through its middleware, as if dispatched, from
    /// `origin`), whose time is within ten years, within ``maxPending``; or a cancel.
    func admit(
        _ type: String, payload: [UInt8], sent: Header, origin: ActionOrigin, catalog: AppCatalog, now: NodeTime, host: any MiddlewareHost
    ) -> Result<[UInt8], ActionError> {
        func refuse(_ reason: String) -> Result<[UInt8], ActionError> { .failure(ActionError(reason)) }
        func validID(_ id: String) -> Bool { !id.isEmpty && id.utf8.count <= Schedules.maxIDBytes }
        let codec = WireCodec()
        /// The request, and the payload to journal: as it came, or in the binary codec when it came as
        /// `{"<type>": {…}}`, the JSON `zflux dispatch` writes for an app it does not host.
        func decode<Request: Codable>(_: Request.Type) -> (request: Request, payload: [UInt8])? {
            if let request = try? codec.decode(Request.self, from: payload) { return (request, payload) }
            guard !WireCodec.isBinary(payload), let wrapped = try? codec.decode([String: Request].self, from: payload), wrapped.count == 1,
                let request = wrapped[type], let bytes = try? codec.encode(request)
            else { return nil }
            return (request, bytes)
        }
        switch type {
        case Schedules.cancelType:
            guard let (cancel, payload) = decode(ScheduleCancel.self) else {
                return refuse("a schedule cancel's payload is {app, id}, or {\"cancel\": {app, id}}")
            }
            guard validID(cancel.id) else { return refuse("a schedule id is 1 to \(Schedules.maxIDBytes) bytes") }
            guard catalog.apps[cancel.app] != nil else { return refuse("schedule '\(cancel.id)' is for an unknown app '\(cancel.app)'") }
            if let refusal = effectsOwn(app: cancel.app, id: cancel.id, sent: sent, catalog: catalog) { return refuse(refusal) }
            return .success(payload)
        case Schedules.scheduleType:
            guard let decoded = decode(ScheduleRequest.self) else {
                return refuse("a schedule's payload is {id, app, type, payload, atNanoseconds or afterNanoseconds}")
            }
            var (request, payload) = decoded
            guard validID(request.id) else { return refuse("a schedule id is 1 to \(Schedules.maxIDBytes) bytes") }
            switch (request.atNanoseconds, request.afterNanoseconds) {
            case (let at?, nil):
                guard at <= now.wallNanoseconds.addingReportingOverflow(Schedules.maxDelayNanoseconds).partialValue else {
                    return refuse("schedule '\(request.id)' is due more than ten years ahead")
                }
                guard at >= 0 else { return refuse("schedule '\(request.id)' is due before 1970") }
            case (nil, let after?):
                guard (0...Schedules.maxDelayNanoseconds).contains(after) else {
                    return refuse("schedule '\(request.id)': a delay is 0 to ten years")
                }
            default:
                return refuse("schedule '\(request.id)' says when with atNanoseconds or afterNanoseconds: one of them")
            }
            guard let (app, _) = catalog.apps[request.app] else {
                return refuse("schedule '\(request.id)' is for an unknown app '\(request.app)'")
            }
            guard Header.isValidActionType(Array(request.type.utf8)) else {
                return refuse("schedule '\(request.id)' has no valid action type")
            }
            if catalog.refuses(sent, app: request.app, type: request.type) {
                return refuse("\(request.app).\(request.type) is sent by the app's effects only: a client cannot schedule it")
            }
            // Nor replace a schedule of such an action.
            if let refusal = effectsOwn(app: request.app, id: request.id, sent: sent, catalog: catalog) { return refuse(refusal) }
            let limit = catalog.maxPayloadBytesByType["\(request.app).\(request.type)"] ?? catalog.maxPayloadBytes
            guard request.payload.count <= limit else {
                return refuse("the payload of \(request.app).\(request.type) is \(request.payload.count) bytes; the limit is \(limit)")
            }
            do {
                let admitted = try app.admit(actionType: request.type, payload: request.payload, client: sent.clientID, origin: origin, host: host)
                // The bounds on what waits in memory, for the payload as it will be kept.
                guard admits(app: request.app, id: request.id, bytes: admitted.count, byEffect: origin == .effect) else {
                    return refuse(
                        "the pending schedules are at their bounds (\(ScheduleBook.maxPending) schedules, \(maxPendingBytes >> 20) MiB of payloads, a tenth of each kept for the apps' effects): cancel some, or wait for them to fire"
                    )
                }
                guard admitted != request.payload else { return .success(payload) }
                request.payload = admitted
                return .success(try codec.encode(request))
            } catch let error as ActionError {
                return .failure(error)
            } catch {
                return refuse("schedule '\(request.id)': \(error)")
            }
        default:
            return refuse("\(Schedules.topic) takes \(Schedules.scheduleType) and \(Schedules.cancelType), not \(type)")
        }
    }

    /// Why a client may not cancel or replace `app`'s pending schedule `id`: an app's effect made it, or
    /// it fires an action only the app's effects may send (a client could otherwise call off what it
    /// may not send itself, as a session's end). Nil: it may, or there is no such schedule, or the
    /// sender holds the effect token.
    private func effectsOwn(app: String, id: String, sent: Header, catalog: AppCatalog) -> String? {
        guard let token = catalog.effectToken, sent.ref != token, let pending = entry(app: app, id: id) else { return nil }
        if catalog.effectOnly[app]?.contains(pending.actionType) == true {
            return "schedule '\(id)' fires \(app).\(pending.actionType), which only the app's effects send: a client cannot cancel or replace it"
        }
        guard pending.byEffect else { return nil }
        return "schedule '\(id)' of \(app) was made by the app's effects: a client cannot cancel or replace it"
    }

    /// Takes the schedules due at `now` (by the wall clock, nanoseconds), in due order, at most
    /// `limit`: they are no longer pending, and the caller sequences each.
    mutating func takeDue(now: Int64, limit: Int) -> [Entry] {
        precondition(limit > 0, "a turn fires something")
        var due: [Entry] = []
        while due.count < limit, let entry = next, entry.dueNanoseconds <= now {
            let pendingBefore = count
            fired(requestSeq: entry.requestSeq, at: now)
            precondition(count == pendingBefore - 1, "a schedule that fires is pending no more")
            // Due order: the heap gives the earliest first.
            assert(
                due.last.map { ($0.dueNanoseconds, $0.requestSeq) <= (entry.dueNanoseconds, entry.requestSeq) } ?? true, "schedules fire in due order"
            )
            due.append(entry)
        }
        return due
    }
}

extension ScheduleBook.Entry {
    /// The ACTION this schedule fires as seq `seq` at `now`: of its app, flagged `scheduled`, with the
    /// due time in `ref` and its request's seq in `clientSeq`.
    func firedHeader(seq: UInt64, now: Int64, history: HistoryID) -> Header {
        precondition(dueNanoseconds <= now, "a schedule fires once due")
        return Header(
            kind: .action, flags: .scheduled, seq: seq, ref: UInt64(bitPattern: dueNanoseconds), clientSeq: requestSeq, timestamp: now,
            actionType: actionType, history: history.rawValue)
    }
}

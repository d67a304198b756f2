import FluxCore
@_spi(Simulation) import NodeCores

/// Durable schedules under faults (issue 40): the echo app's effects make, replace and cancel
/// schedules (``EchoApp/scheduling(ping:salt:)``), and the checker follows them through the history on
/// its own, with a model of its own rather than the dispatcher's `ScheduleBook`, so that a bug in the
/// book cannot hide itself. What it holds to:
///
/// - a schedule fires at most once: never two fired actions for one request in the history;
/// - only what is pending fires: a schedule cancelled or replaced before its time never fires, and a
///   fired action carries its request's app, action, payload and due time;
/// - never before its time, by the clock of the dispatcher that fired it: the fired action's stamp
///   (that dispatcher's wall clock when it sequenced it) is at or after the due time it carries;
/// - every schedule fires: once the cluster has settled, none is left pending whose time has come by
///   the leader's clock (convergence waits for it, and the liveness check names what is left);
/// - replicas agree: the leader's book and every dispatcher's journal leave the same ones pending.
extension Simulation {
    /// The schedules as a stretch of history makes, cancels and fires them, read in seq order.
    struct ScheduleModel {
        struct Request {
            var key: String
            var app: String
            var type: String
            var payload: [UInt8]
            var due: Int64
        }

        /// The last seq read.
        var through: UInt64 = 0
        /// Pending schedules by app and id: the seq of the request that made each.
        var pending: [String: UInt64] = [:]
        /// Every schedule request read, by its seq.
        var requests: [UInt64: Request] = [:]
        /// The seq of the action that fired each request's schedule, by the request's seq.
        var fired: [UInt64: UInt64] = [:]
        var cancelled = 0
        var replaced = 0
        /// Made, fired, cancelled and replaced, per app.
        var byApp: [String: SimulationResult.AppCounts] = [:]

        /// Reads the action at the next seq; returns the rule it breaks, if any: (invariant, detail).
        mutating func read(_ action: Message) -> (String, String)? {
            let header = action.header
            through = header.seq
            if header.flags.contains(.scheduled) {
                let requestSeq = header.clientSeq
                guard let request = requests[requestSeq] else {
                    return ("schedules fire what was asked", "seq \(header.seq) fires a schedule as if made at seq \(requestSeq), which made none")
                }
                if let first = fired[requestSeq] {
                    return (
                        "a schedule fires once",
                        "the schedule \(request.key) made at seq \(requestSeq) fired at seq \(first) and again at seq \(header.seq)"
                    )
                }
                guard pending[request.key] == requestSeq else {
                    let why = pending[request.key].map { "replaced at seq \($0)" } ?? "cancelled"
                    return (
                        "cancelled and replaced schedules never fire",
                        "seq \(header.seq) fires the schedule \(request.key) made at seq \(requestSeq), \(why) before that"
                    )
                }
                guard action.topicString == request.app, header.actionType == request.type, action.payload == request.payload,
                    Int64(bitPattern: header.ref) == request.due
                else {
                    return (
                        "schedules fire what was asked",
                        "seq \(header.seq) fires \(action.topicString).\(header.actionType) due \(Int64(bitPattern: header.ref)) for the request at "
                            + "seq \(requestSeq), which asked for \(request.app).\(request.type) due \(request.due)"
                    )
                }
                if header.timestamp < request.due {
                    return (
                        "never before its time",
                        "seq \(header.seq) fires the schedule \(request.key) (made at seq \(requestSeq)) "
                            + "\((request.due - header.timestamp) / 1_000_000) ms before it was due, by the clock of the dispatcher that fired it"
                    )
                }
                fired[requestSeq] = header.seq
                byApp[request.app, default: .init()].schedulesFired += 1
                pending[request.key] = nil
                return nil
            }
            guard action.topicString == Schedules.topic else { return nil }
            let codec = WireCodec()
            switch header.actionType {
            case Schedules.scheduleType:
                // The dispatcher journals only what decodes: one that does not is reported by the
                // fire it can never match.
                guard let request = try? codec.decode(ScheduleRequest.self, from: action.payload) else { return nil }
                let key = "\(request.app)/\(request.id)"
                if pending[key] != nil {
                    replaced += 1
                    byApp[request.app, default: .init()].schedulesReplaced += 1
                }
                byApp[request.app, default: .init()].schedulesMade += 1
                pending[key] = header.seq
                requests[header.seq] = Request(
                    key: key, app: request.app, type: request.type, payload: request.payload, due: request.due(stampedAt: header.timestamp))
            case Schedules.cancelType:
                guard let cancel = try? codec.decode(ScheduleCancel.self, from: action.payload) else { return nil }
                if pending.removeValue(forKey: "\(cancel.app)/\(cancel.id)") != nil {
                    cancelled += 1
                    byApp[cancel.app, default: .init()].schedulesCancelled += 1
                }
            default:
                break
            }
            return nil
        }

        /// The pending schedules in request order: (app/id, request seq, due).
        var pendingList: [(key: String, requestSeq: UInt64, due: Int64)] {
            pending.map { (key: $0.key, requestSeq: $0.value, due: requests[$0.value]?.due ?? 0) }.sorted { $0.requestSeq < $1.requestSeq }
        }

        /// Those whose time has come at `wallNanoseconds`.
        func due(at wallNanoseconds: Int64) -> [(key: String, requestSeq: UInt64, due: Int64)] {
            pendingList.filter { $0.due <= wallNanoseconds }
        }
    }

    /// Reads the history into the model as far as it runs without a gap (after a restart, recovered
    /// actions may come back out of order), checking each action as it goes.
    func followSchedules() {
        while result.failure == nil, let action = history[scheduleModel.through + 1] {
            result.invariantChecks += 1
            if let (invariant, detail) = scheduleModel.read(action) {
                fail(invariant, detail)
                return
            }
        }
    }

    /// The schedules the leader must still fire: pending in the history through its durable head and
    /// due by its own clock. Nil while the history through that head is not all known yet.
    func schedulesDueUnfired() -> [(key: String, requestSeq: UInt64, due: Int64)]? {
        guard let leader = leaderProcess, let core = leader.core else { return nil }
        followSchedules()
        guard scheduleModel.through >= core.durableHead else { return nil }
        return scheduleModel.due(at: time(.dispatcher(leader.index)).wallNanoseconds)
    }

    /// At the end: the leader's book holds what the history leaves pending, and so does every
    /// dispatcher's journal, read on its own through that head (what a restart or a failover would
    /// rebuild from).
    func checkSchedulesAgree() {
        guard let leader = leaderProcess, let core = leader.core, result.failure == nil else { return }
        followSchedules()
        let expected = scheduleModel.pendingList.map { "\($0.key)@\($0.requestSeq)" }
        result.invariantChecks += 1
        let book = core.schedules.pending().sorted { $0.requestSeq < $1.requestSeq }.map { "\($0.app)/\($0.id)@\($0.requestSeq)" }
        if book != expected {
            fail(
                "replicas agree on schedules",
                "\(name(of: .dispatcher(leader.index)))'s book holds \(book) pending; the history leaves \(expected)")
            return
        }
        for process in dispatchers {
            result.invariantChecks += 1
            var model = ScheduleModel()
            for record in process.disk.records(in: Simulation.journalDirectory) where record.header.seq <= core.durableHead {
                if let (invariant, detail) = model.read(record) {
                    fail(invariant, "in \(name(of: .dispatcher(process.index)))'s journal: \(detail)")
                    return
                }
            }
            let held = model.pendingList.map { "\($0.key)@\($0.requestSeq)" }
            if held != expected {
                fail(
                    "replicas agree on schedules",
                    "\(name(of: .dispatcher(process.index)))'s journal leaves \(held) pending; the history leaves \(expected)")
                return
            }
        }
        // Per app: the schedules, and the actions of the history (a schedule's request or cancel is
        // the dispatcher's, counted with the app it is for above).
        var apps = scheduleModel.byApp
        for seq in scheduleModel.pending.values { apps[scheduleModel.requests[seq]?.app ?? "", default: .init()].schedulesPending += 1 }
        for action in history.values where action.topicString != Schedules.topic { apps[action.topicString, default: .init()].actions += 1 }
        precondition(apps.values.reduce(0) { $0 + $1.schedulesMade } == scheduleModel.requests.count, "every request is some app's")
        precondition(apps.values.reduce(0) { $0 + $1.schedulesFired } == scheduleModel.fired.count, "every fired schedule is some app's")
        precondition(apps.values.reduce(0) { $0 + $1.schedulesPending } == expected.count, "every pending schedule is some app's")
        precondition(
            apps.values.reduce(0) { $0 + $1.schedulesCancelled } == scheduleModel.cancelled
                && apps.values.reduce(0) { $0 + $1.schedulesReplaced } == scheduleModel.replaced,
            "every cancelled and replaced schedule is some app's")
        for (app, counts) in apps { result.apps[app, default: .init()].add(counts) }
    }
}

import Examples
import FluxCore
import NodeCores
import Testing

/// The dispatcher core's side of quarantine and of effect-only actions (issue 35), one step at a time.
@Suite("Dispatcher core: effect-only actions and quarantine")
struct QuarantineCoreTests {
    typealias F = CoreFixtures
    static let token: UInt64 = 0x5EC2_E7

    func core() -> DispatcherCore {
        var rules = DispatcherRules(apps: [Login.app(environment: .live)])
        rules.effectToken = Self.token
        return DispatcherCore(rules: rules, head: 0, history: F.history, now: F.at(0), logger: F.logger)
    }

    func loginSucceeded(ref: UInt64, clientSeq: UInt64 = 1) throws -> Message {
        Message(
            topic: "login", header: Header(kind: .dispatch, ref: ref, clientID: 7, clientSeq: clientSeq, actionType: "loginSucceeded"),
            payload: try Login.app().wirePayload(type: "loginSucceeded", argumentsJSON: Array(#"{"user":"ada"}"#.utf8)))
    }

    @Test(
        "an action only effects send is refused without the effect token and taken with it; quarantined and released, the dispatcher's own copy is taken though it carries no token, once"
    )
    func effectOnlyAndRelease() throws {
        let core = core()
        core.receivedIntake(.success(try loginSucceeded(ref: 0)), from: [1], now: F.at(1))
        let refusal = core.takeCommands().compactMap(\.intakeReply).first
        #expect(refusal?.kind == .nack && String(decoding: refusal?.payload ?? [], as: UTF8.self).contains("sent by the app's effects only"))
        core.receivedIntake(.success(try loginSucceeded(ref: Self.token, clientSeq: 2)), from: [1], now: F.at(1))
        core.endOfBurst()
        #expect(core.head == 1, "a store's effect, with the token, is sequenced")

        core.quarantined([Quarantine(seq: 1, app: "login", actionType: "loginSucceeded", reason: "test")])
        let again = core.releaseQuarantined(1, dispatch: try loginSucceeded(ref: 0, clientSeq: 3), from: [2], now: F.at(2))
        #expect(again == 2 && core.quarantine[1]?.releasedAs == 2, "released as seq 2")
        #expect(core.releaseQuarantined(1, dispatch: try loginSucceeded(ref: 0, clientSeq: 4), from: [2], now: F.at(2)) == nil)
        #expect(core.head == 2, "sequenced once")
    }

    @Test(
        "a QUARANTINE-RELEASE without the nodes' credential (the effect token) is refused with a NACK that says so; with it, the release goes ahead")
    func releaseNeedsTheNodesCredential() throws {
        let core = core()
        core.quarantined([Quarantine(seq: 1, app: "login", actionType: "loginSucceeded", reason: "test")])
        func release(ref: UInt64, clientSeq: UInt64) -> [DispatcherCore.Command] {
            let message = Message(header: Header(kind: .quarantineRelease, seq: 1, ref: ref, clientID: 5, clientSeq: clientSeq))
            core.receivedIntake(.success(message), from: [3], now: F.at(1))
            return core.takeCommands()
        }
        for forged in [0, Self.token ^ 1] {
            let refusal = release(ref: forged, clientSeq: 1).compactMap(\.intakeReply).first
            #expect(refusal?.kind == .nack && refusal?.header.clientSeq == 1)
            let reason = String(decoding: refusal?.payload ?? [], as: UTF8.self)
            #expect(reason.contains("takes the nodes' credential"), "\(reason)")
        }
        let released = release(ref: Self.token, clientSeq: 2).contains {
            if case .releaseQuarantined(seq: 1, _, _) = $0 { true } else { false }
        }
        #expect(released, "with the token, the shell is asked to read the action and offer it again")
    }
}

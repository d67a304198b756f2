/// Every kind of message in the wire protocol (docs/PROTOCOL.md).
public enum MessageKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// client → dispatcher intake: an action to sequence.
    case dispatch = 1
    /// dispatcher → client: the action was sequenced as `seq`.
    case ack = 2
    /// dispatcher → client: the action was refused; the payload is the UTF-8 reason.
    case nack = 3
    /// dispatcher → stores (PUB), and inside replay batches: one sequenced action.
    case action = 4
    /// dispatcher or store → subscribers (PUB): liveness plus the newest seq / version.
    case heartbeat = 5
    /// store → views (PUB): state at `seq` = version.
    case state = 6
    /// view → store: send me your whole state.
    case snapshotRequest = 7
    /// store → view: the whole state at `seq` = version.
    case snapshot = 8
    /// store → dispatcher replay: send actions from `seq` on.
    case replayRequest = 9
    /// dispatcher → store: a batch of consecutive actions.
    case replayBatch = 10
    /// dispatcher → store: the end of a replay; `seq` is the dispatcher's newest seq.
    case replayEnd = 11
    /// anyone → a node's ROUTER: describe yourself.
    case statusRequest = 12
    /// node → asker: a JSON status document.
    case status = 13
    /// store → views and `zflux tail` (state PUB): the store could not accept the action at `seq` in its
    /// state; the payload is the UTF-8 reason. The state is unchanged.
    case rejected = 14
    /// dispatcher → stores (PUB): consecutive actions of one app, sequenced in one burst (protocol 3).
    case actionBatch = 15
    /// dispatcher → client: the ACKs of one burst for a client that asked for them batched (protocol 3).
    case ackBatch = 16
    /// standby → leader's replication ROUTER: follow me from `seq`, my newest record, stamped `history`;
    /// `ref` is the newest epoch I have seen (protocol 3, issue 27).
    case replicaHello = 17
    /// leader → standby: the stream resumes after `seq`; the payload is the client-scope secret.
    case replicaWelcome = 18
    /// leader → standby: your record at `seq` is not mine: drop the run of records it ends and say hello again.
    case replicaMismatch = 19
    /// leader → standby: consecutive records from `seq` on (a REPLAY-BATCH payload; none: a heartbeat);
    /// `ref` is what the leader has committed (published and acknowledged).
    case replicaAppend = 20
    /// standby → leader: I hold everything through `seq` durable.
    case replicaAck = 21
    /// standby → leader: I have seen the newer epoch in `history`; I follow you no more (fencing).
    case replicaRefuse = 22
    /// store → dispatcher replay: the action at `seq` (of the app in the topic) crashed my reducer again
    /// and again; the payload is the UTF-8 reason. The dispatcher quarantines it: replays then carry
    /// it as a tombstone (flag ``Header/Flags/quarantined``), which every replica skips.
    case quarantineRequest = 23
    /// client → dispatcher intake: sequence the quarantined action at `seq` again, as a new action
    /// (after the reducer was fixed); answered by ACK (its new seq) or NACK.
    case quarantineRelease = 24
    /// client → dispatcher intake: several DISPATCHes in one message (``DispatchBatch``), answered as
    /// each DISPATCH in it would be, the ACKs together as ACK-BATCHes.
    case dispatchBatch = 25
    /// leader → standby: the whole quarantine list (``QuarantineList``), whose digest is `ref`; the
    /// standby keeps it beside its journal and says which list it holds in each REPLICA-ACK's `ref`.
    case replicaQuarantine = 26

    /// The protocol version a header of this kind is written with: the kinds protocol 3 added say 3,
    /// so an older reader refuses them by their version, and every other kind still says 2.
    public var protocolVersion: UInt8 { rawValue >= MessageKind.actionBatch.rawValue ? 3 : 2 }

    public var description: String {
        switch self {
        case .dispatch: "DISPATCH"
        case .ack: "ACK"
        case .nack: "NACK"
        case .action: "ACTION"
        case .heartbeat: "HEARTBEAT"
        case .state: "STATE"
        case .snapshotRequest: "SNAPSHOT-REQUEST"
        case .snapshot: "SNAPSHOT"
        case .replayRequest: "REPLAY-REQUEST"
        case .replayBatch: "REPLAY-BATCH"
        case .replayEnd: "REPLAY-END"
        case .statusRequest: "STATUS-REQUEST"
        case .status: "STATUS"
        case .rejected: "REJECTED"
        case .actionBatch: "ACTION-BATCH"
        case .ackBatch: "ACK-BATCH"
        case .replicaHello: "REPLICA-HELLO"
        case .replicaWelcome: "REPLICA-WELCOME"
        case .replicaMismatch: "REPLICA-MISMATCH"
        case .replicaAppend: "REPLICA-APPEND"
        case .replicaAck: "REPLICA-ACK"
        case .replicaRefuse: "REPLICA-REFUSE"
        case .quarantineRequest: "QUARANTINE-REQUEST"
        case .quarantineRelease: "QUARANTINE-RELEASE"
        case .dispatchBatch: "DISPATCH-BATCH"
        case .replicaQuarantine: "REPLICA-QUARANTINE"
        }
    }
}

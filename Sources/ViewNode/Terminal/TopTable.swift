import FluxCore
import Foundation
import NodeSupport

/// The rows of `zflux top` (or a team's binary's `top`), from every node's status; rates come from the
/// change between samples.
public final class TopTable: @unchecked Sendable {
    // @unchecked: sampled and read by one thread at a time (the command's UI thread).
    let nodes: [StatusTarget]
    let runDirectory: String
    /// The command, by the name of the binary that runs it: `zflux top`, or a team's own `poll top`.
    public let title: String
    private var rows: [[String]] = []
    private var previous: [String: (count: Int, at: UInt64)] = [:]

    /// `program`: the binary's name, which titles the table.
    public init(nodes: [StatusTarget], runDirectory: String, program: String = StandardOutput.programName) {
        self.nodes = nodes
        self.runDirectory = runDirectory
        self.title = program + " top"
    }

    public func sample() {
        let restarts = RunDirectory(runDirectory).restarts()
        var head = 0
        rows = []
        for node in nodes {
            let (key, name) = (node.key, node.name)
            guard let status = nodeStatus(endpoint: node.endpoint, security: node.security, timeoutMilliseconds: 300) else {
                rows.append([
                    name, key == "dispatcher" ? "dispatcher" : "store", "-", "-", "-", "-", "-", "-", "-", "-", "\(restarts[key] ?? 0)",
                    "not answering",
                ])
                continue
            }
            let count = Int(status.position)
            if key == "dispatcher" { head = count }
            let now = MonotonicClock.nowMilliseconds()
            var rate = "-"
            if let last = previous[key], now > last.at { rate = String(format: "%.0f", Double(count - last.count) * 1000 / Double(now - last.at)) }
            previous[key] = (count, now)
            let uptime = String(format: "%.0fs", Double(status.uptimeMs) / 1000)
            let lag = key == "dispatcher" ? "-" : "\(max(0, head - count))"
            let journal = TopTable.journal(of: status)
            var role = status.role.rawValue
            if let leads = status.leader {
                // A dispatcher of a pair: which one leads.
                role = "\(leads ? "leader" : "stepped down") \(status.name ?? "")"
            }
            let state = Self.state(of: status)
            // A dispatcher's pending schedules (`zflux schedules` lists them); stores have none.
            let schedules = status.role == .dispatcher ? "\(status.schedulesPending ?? 0)" : "-"
            rows.append([
                name, role, "\(status.pid)", uptime, "\(count)", rate, lag,
                "\(status.subscribers)", journal, schedules, "\(restarts[key] ?? 0)", state,
            ])
        }
    }

    /// The JOURNAL cell: the journal's size; where it starts once retention (or a compaction) let its
    /// oldest segments go; and, once it has synced, the p99 of its newest syncs (a slowing disk shows
    /// there before the ACKs do).
    package static func journal(of status: NodeStatus) -> String {
        var journal = status.journalBytes.map { String(format: "%.1f MB", Double($0) / 1e6) } ?? "-"
        if let first = status.journalFirstSeq, first > 1 { journal += " from \(first)" }
        if let p99 = status.journalSyncP99Us { journal += ", sync p99 \(p99) µs" }
        return journal
    }

    /// The STATE column of a node that answered: how it stands, and what needs a look.
    package static func state(of status: NodeStatus) -> String {
        var state = status.role == .dispatcher ? "ok" : "\(status.dispatcher ?? "?")\(status.caughtUp == false ? ", catching up" : "")"
        if status.leader != nil {
            // A dispatcher of a pair: in which epoch, and how far its standby is.
            let standby =
                status.standbyFollowing == true
                ? "standby \(status.replicationLag.map { $0 == 0 ? "in sync" : "\($0) behind" } ?? "?")" : "no standby"
            state = "epoch \(status.epoch.map { HistoryID.epochDescription($0) } ?? "?"), \(standby)"
        }
        // Retention over its budget: who holds the oldest segments (the leader's journal, then the standby's).
        for (whose, note) in [("journal", status.journalRetention), ("standby's journal", status.standbyRetention)] {
            guard let note, let held = note.range(of: " for ") else { continue }
            state += ", \(whose) kept for \(note[held.upperBound...])"
        }
        if status.journalWritable == false { state = status.leader == nil ? "JOURNAL FULL" : state + ", JOURNAL FULL" }
        if let quarantined = status.quarantined, !quarantined.isEmpty {
            // The dispatcher keeps them all; a store lists those it skipped.
            let seqs = quarantined.prefix(3).map { "\($0.seq)" }.joined(separator: " ") + (quarantined.count > 3 ? " …" : "")
            state += ", \(quarantined.count) quarantined (seq \(seqs))"
        }
        // A store's effect actions its dispatcher refused for now, kept to send again (a newer one takes them).
        if let held = status.effectsHeld, held > 0 { state += ", \(held) effect\(held == 1 ? "" : "s") held (dispatcher older?)" }
        return state
    }

    /// The columns' titles, as the table shows them.
    package static let header = [
        "NODE", "ROLE", "PID", "UPTIME", "SEQ/VERSION", "ACTIONS/S", "LAG", "SUBSCRIBERS", "JOURNAL", "SCHEDULES", "RESTARTS", "STATE",
    ]

    /// The last sample's rows, a cell per column of ``header`` (what `zflux devtools` sends its page).
    package var sampledRows: [[String]] { rows }

    /// The table; with a filter, only the nodes whose row contains it (case-insensitive). Below it, the
    /// filter being typed and the keys, for the screen that refreshes.
    public func lines(filter: FilterPrompt = FilterPrompt()) -> Frame {
        table(filter: filter) + ["", filter.line ?? "", StyledLine(ListKeys.help, .dim)]
    }

    /// The table alone, as `top --once` prints it: no keys, since nothing reads them.
    package func printedLines() -> Frame { table(filter: FilterPrompt()) }

    private func table(filter: FilterPrompt) -> Frame {
        let header = TopTable.header
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        func format(_ row: [String]) -> String {
            row.enumerated().map { $1.padding(toLength: widths[$0] + 2, withPad: " ", startingAt: 0) }.joined()
        }
        return [StyledLine(" \(title) · \(runDirectory)", .bold), "", StyledLine(format(header), .inverse)]
            + rows.filter { filter.matches($0.joined(separator: " ")) }.map { StyledLine(format($0), $0.last == "not answering" ? .bad : .plain) }
    }
}

/// A node to ask for its status: (supervisor key, display name, status endpoint).
public struct StatusTarget: Sendable {
    public var key: String
    public var name: String
    public var endpoint: String
    public var security: Security.Settings?

    public init(key: String, name: String, endpoint: String, security: Security.Settings?) {
        self.key = key
        self.name = name
        self.endpoint = endpoint
        self.security = security
    }
}

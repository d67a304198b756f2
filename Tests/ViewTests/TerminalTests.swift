import FluxCore
import Foundation
import Testing

@testable import ViewNode

@Suite("Terminal rendering")
struct TerminalTests {
    @Test("a styled line is cut or padded to the width, with ANSI codes only when colour is on")
    func styledLine() {
        let line = StyledLine("abc", .bold) + StyledLine("defgh")
        #expect(line.rendered(width: 5, colour: false) == "abcde")
        #expect(line.rendered(width: 10, colour: false) == "abcdefgh  ")
        #expect(line.rendered(width: 10, colour: true) == "\u{1B}[1mabc\u{1B}[0mdefgh  ")
        #expect(line.plainText == "abcdefgh")
    }

    @Test("redraws write only the rows that changed, and clear rows that went away")
    func frameDiff() {
        #expect(FrameDiff.output(from: nil, to: ["a", "b"]) == "\u{1B}[1;1Ha\u{1B}[2;1Hb")
        #expect(FrameDiff.output(from: ["a", "b", "c"], to: ["a", "B", "c"]) == "\u{1B}[2;1HB")
        #expect(FrameDiff.output(from: ["a", "b"], to: ["a", "b"]) == "")
        #expect(FrameDiff.output(from: ["a", "b", "c"], to: ["a"]) == "\u{1B}[2;1H\u{1B}[2K\u{1B}[3;1H\u{1B}[2K")
    }

    @Test("key bytes decode to keys, several per read")
    func keys() {
        #expect(Key.decode(Array("ab".utf8)) == [.character("a"), .character("b")])
        #expect(Key.decode([0x1B, 0x5B, 0x41, 0x1B, 0x5B, 0x42, 0x0D, 0x7F, 0x09, 0x03]) == [.up, .down, .enter, .backspace, .tab, .control("c")])
        #expect(Key.decode([0x1B, 0x5B, 0x33, 0x7E]) == [.delete])
        // Page Up/Down, Home/End in both forms, F1 in both forms, then a plain key.
        #expect(
            Key.decode(Array("\u{1B}[5~\u{1B}[6~\u{1B}[H\u{1B}[F\u{1B}[1~\u{1B}[4~\u{1B}OP\u{1B}[11~x".utf8))
                == [.pageUp, .pageDown, .home, .end, .home, .end, .f1, .f1, .character("x")])
        #expect(Key.decode(Array("é".utf8)) == [.character("é")])
        #expect(Key.decode([0x1B]) == [.escape])
    }

    @Test("the state tree shows any JSON, collapses containers, and highlights what changed")
    func stateTree() {
        let before = Data(#"{"count":1,"items":["a","b"],"name":"x","on":true}"#.utf8)
        let after = Data(#"{"count":2,"items":["a","b"],"name":"x","on":true}"#.utf8)
        var tree = StateTree()
        tree.selected = -1
        let frame = tree.render(after, previous: before)
        #expect(
            frame.map(\.plainText) == [
                "▾ {4}", "    count: 2", "  ▾ items: [2]", "      0: \"a\"", "      1: \"b\"", "    name: \"x\"", "    on: true",
            ])
        #expect(frame.filter { $0.runs.first?.style == .highlight }.map(\.plainText) == ["▾ {4}", "    count: 2"])
        tree.selected = 2
        tree.toggle(after)
        #expect(tree.render(after, previous: nil).map(\.plainText) == ["▾ {4}", "    count: 2", "  ▸ items: [2]", "    name: \"x\"", "    on: true"])
        #expect(tree.rowCount(after) == 5)
    }

    @Test("the generic screen moves its selection and toggles with keys")
    func genericScreen() {
        var screen = StateTreeScreen()
        let state = Data(#"{"a":{"b":1}}"#.utf8)
        #expect(screen.handle(.down, state: state) == .redraw)
        #expect(screen.handle(.enter, state: state) == .redraw)
        #expect(screen.render(state: state, previous: nil, width: 40).map(\.plainText) == ["▾ {1}", "  ▸ a: {1}"])
        #expect(screen.handle(.character("x"), state: state) == .ignored)
    }

    @Test("an idle tick draws the kept body again without rendering the screen; anything new, or another size, renders it")
    func idleTickRendersNothing() {
        var body = KeptBody()
        var renders = 0
        func render() -> Frame {
            renders += 1
            return [StyledLine("render \(renders)")]
        }
        #expect(body.frame(width: 80, room: 20, changed: true, render: render).map(\.plainText) == ["render 1"])
        // Three idle ticks (the status bar's clock only): the same lines, no render.
        for _ in 0..<3 { #expect(body.frame(width: 80, room: 20, changed: false, render: render).map(\.plainText) == ["render 1"]) }
        #expect(renders == 1)
        #expect(body.frame(width: 80, room: 20, changed: true, render: render).map(\.plainText) == ["render 2"], "an update or a key")
        #expect(body.frame(width: 100, room: 20, changed: false, render: render).map(\.plainText) == ["render 3"], "the terminal was resized")
        #expect(body.frame(width: 100, room: 30, changed: false, render: render).map(\.plainText) == ["render 4"])
        #expect(renders == 4)
    }

    @Test("top's STATE shows a store's effect actions held for a newer dispatcher, as its status counts them, and nothing while none is")
    func topShowsHeldEffects() {
        var status = NodeStatus(role: .store, pid: 1, uptimeMs: 1, subscribers: 0, rejected: 0)
        status.dispatcher = "connected"
        status.effectsHeld = 0
        #expect(TopTable.state(of: status) == "connected")
        status.effectsHeld = 2
        #expect(TopTable.state(of: status) == "connected, 2 effects held (dispatcher older?)")
    }

    @Test("top's JOURNAL cell: the size, the first seq once segments were let go, and the syncs' p99 once the journal synced")
    func journalCell() {
        var status = NodeStatus(role: .dispatcher, pid: 1, uptimeMs: 1, subscribers: 0, rejected: 0)
        status.journalBytes = 3_100_000
        #expect(TopTable.journal(of: status) == "3.1 MB")
        status.journalFirstSeq = 1171
        #expect(TopTable.journal(of: status) == "3.1 MB from 1171")
        (status.journalSyncs, status.journalSyncP50Us, status.journalSyncP99Us, status.journalSyncMaxUs) = (40, 180, 412, 900)
        #expect(TopTable.journal(of: status) == "3.1 MB from 1171, sync p99 412 µs")
        #expect(TopTable.journal(of: NodeStatus(role: .store, pid: 1, uptimeMs: 1, subscribers: 0, rejected: 0)) == "-")
    }

    @Test("top's STATE says who holds a journal over retain_mb back, the leader's and the standby's")
    func retentionInTop() {
        var status = NodeStatus(role: .dispatcher, pid: 1, uptimeMs: 1, subscribers: 0, rejected: 0)
        status.journalRetention = "within retain_mb"
        #expect(TopTable.state(of: status) == "ok")
        status.journalRetention = "over retain_mb, kept from seq 40 for store ledger's snapshot (version 39)"
        status.standbyRetention = "over retain_mb, kept from seq 12 for the older checkpoint (seq 11)"
        #expect(
            TopTable.state(of: status)
                == "ok, journal kept for store ledger's snapshot (version 39), standby's journal kept for the older checkpoint (seq 11)")
    }

    @Test("top and the full-screen tail are titled with the binary's own name, their key help too: a team's poll says poll top")
    func ownBinaryTitles() {
        let table = TopTable(nodes: [], runDirectory: "/srv/poll", program: "poll")
        #expect(table.lines().first?.plainText == " poll top · /srv/poll")
        var keys = ListKeys()
        let quit = keys.handle(.character("?"))
        #expect(!quit && keys.showingHelp)
        #expect(keys.frame(title: table.title) { [] }.first?.plainText == "Keys of poll top")

        var tail = TailScreen(program: "poll")
        #expect(tail.title(app: "ballot", type: "voteCast") == " poll tail · app ballot · type voteCast")
        #expect(tail.title(app: nil, type: nil) == " poll tail")
        let quitTail = tail.keys.handle(.f1)
        #expect(!quitTail && tail.keys.showingHelp)
        #expect(tail.frame(title: tail.title(app: nil, type: nil), width: 40, height: 12).first?.plainText == "Keys of poll tail")
        // The stock binary, in a test process, is zflux.
        #expect(TopTable(nodes: [], runDirectory: "/r").title == "zflux top" && TailScreen().command == "zflux tail")
    }
}

/// The app's tests: its story told through zflux's `TestStore`.
extension Starter {
    var tests: String {
        #"""
        import FluxClusterTesting
        import FluxCore
        import \#(appModule)
        import FluxTesting
        import Testing
        import ViewNode

        /// The tally's story. A `TestStore` applies each action the way a store in the cluster does: `send`
        /// an action and say how the state changes; `receive` what an effect sends back (in a cluster it
        /// goes through the dispatcher as a later action); `finish` checks nothing is left unasserted.
        @Suite("\#(name)")
        struct \#(name)Tests {
            @Test("the ballot is loaded by an effect, then votes are counted, and a new option joins with its first vote")
            func loadAndVote() async {
                let store = TestStore(\#(name).app(environment: .mock))
                await store.send(.loadTapped) { $0.isLoading = true }
                await store.receive(.ballotLoaded(options: ["yes", "no", "maybe"])) {
                    $0.isLoading = false
                    $0.options = [.init(name: "yes"), .init(name: "no"), .init(name: "maybe")]
                }
                await store.send(.voteCast(option: "yes")) { $0.options[0].votes = 1 }
                await store.send(.voteCast(option: "tea")) { $0.options.append(.init(name: "tea", votes: 1)) }
                #expect(store.state.totalVotes == 2)
                await store.finish()
            }

            @Test("a ballot that cannot be loaded says why, and the next load clears it")
            func loadFails() async {
                let store = TestStore(\#(name).app(environment: \#(name).Environment { throw Unreachable() }))
                await store.send(.loadTapped) { $0.isLoading = true }
                await store.receive(.ballotFailed(reason: "the ballot server did not answer")) {
                    $0.isLoading = false
                    $0.loadError = "the ballot server did not answer"
                }
                store.environment = .mock
                await store.send(.loadTapped) {
                    $0.isLoading = true
                    $0.loadError = nil
                }
                await store.receive(.ballotLoaded(options: ["yes", "no", "maybe"])) {
                    $0.isLoading = false
                    $0.options = [.init(name: "yes"), .init(name: "no"), .init(name: "maybe")]
                }
                await store.finish()
            }

            @Test("the screen shows each option with its votes; ↓ then Enter votes for the option under the cursor")
            func screen() {
                var screen = \#(screenType)()
                let state = \#(name).State(options: [.init(name: "yes", votes: 2), .init(name: "no")])
                #expect(screen.render(state: state, previous: nil, width: 40).first?.plainText == "Tally  2 votes")
                #expect(screen.handle(.down, state: state) == .redraw)
                #expect(screen.handle(.enter, state: state) == .send(.voteCast(option: "no")))
                #expect(screen.handle(.character("l"), state: state) == .send(.loadTapped))
            }

            @Test("the store refuses a vote for a new option once the tally holds 20, and the state stays as it was")
            func fullTally() async {
                let store = TestStore(\#(name).app(environment: .mock))
                for number in 1...\#(name).maxOptions {
                    await store.send(.voteCast(option: "option \(number)")) { $0.options.append(.init(name: "option \(number)", votes: 1)) }
                }
                await store.send(.voteCast(option: "tea"), rejectedWith: "the tally takes at most 20 options: vote for one of them")
                await store.send(.voteCast(option: "option 1")) { $0.options[0].votes = 2 }
                await store.finish()
            }

            @Test("the poll closes itself when its time comes, by the test's clock, and refuses votes after")
            func closesByItself() async {
                // Time moves only when the test says: the schedule fires once the clock passes its due time.
                let clock = TestClock()
                let store = TestStore(\#(name).app(environment: .mock), clock: clock)
                await store.send(.closeIn(seconds: 3600))
                clock.advance(by: .seconds(3599))
                await store.send(.voteCast(option: "yes")) { $0.options = [.init(name: "yes", votes: 1)] }
                await store.send(.closeIn(seconds: 60))  // a new time replaces the first
                clock.advance(by: .seconds(59))
                #expect(Array(store.pendingSchedules.keys) == ["close"])
                clock.advance(by: .seconds(1))
                await store.receive(.pollClosed) { $0.isClosed = true }
                await store.send(.voteCast(option: "no"), rejectedWith: "the poll is closed")
                await store.finish()
            }

            @Test("calling the closing off cancels its schedule; a poll that closes well after its time says it closed late")
            func keepOpenAndLate() async {
                let clock = TestClock()
                let store = TestStore(\#(name).app(environment: .mock), clock: clock)
                await store.send(.closeIn(seconds: 60))
                await store.send(.keepOpen)
                clock.run()  // nothing left to fire
                #expect(store.pendingSchedules.isEmpty && clock.pending == 0)
                await store.send(.closeIn(seconds: 60))
                // As if the cluster were down when the poll was due: the schedule fires half a minute late.
                clock.advanceWhileDown(by: .seconds(90))
                await store.receive(.pollClosed) {
                    $0.isClosed = true
                    $0.closedLate = true
                }
                await store.finish()
            }

            @Test("the dispatcher refuses a vote for an option without a name, and a poll open too long")
            func validation() {
                #expect(\#(name).validate(.voteCast(option: "  ")) == "an option needs a name")
                #expect(\#(name).validate(.voteCast(option: "tea")) == nil)
                #expect(\#(name).validate(.closeIn(seconds: 30 * 24 * 3600)) == "a poll closes in 1 second to 7 days")
            }
        }

        /// The same app in a real dispatcher and store, inside the test process: actions go through the
        /// dispatcher's intake, get their seqs, and the store applies them in that order.
        @Suite("\#(name) in a cluster")
        struct \#(name)ClusterTests {
            @Test("the ballot's effect answers through the dispatcher as the next seq, and a vote after it is counted")
            func loadAndVoteInACluster() async throws {
                let cluster = try await TestCluster.start(stores: ["\#(appName)": \#(name).app(environment: .mock)])
                try await cluster.dispatch(\#(name).Action.loadTapped, to: "\#(appName)")
                // seq 1 loadTapped, seq 2 the ballot the effect sent back
                let loaded = try await cluster.state(of: "\#(appName)", as: \#(name).State.self, atLeast: 2)
                #expect(loaded.options.map(\.name) == ["yes", "no", "maybe"])
                try await cluster.dispatch(\#(name).Action.voteCast(option: "no"), to: "\#(appName)")
                let voted = try await cluster.state(of: "\#(appName)", as: \#(name).State.self, atLeast: 3)
                #expect(voted.options[1].votes == 1 && voted.totalVotes == 1)
                try await cluster.shutdown()
            }

            @Test("the dispatcher keeps the poll's schedule and fires it when the test's clock passes its time")
            func closesInACluster() async throws {
                let clock = TestClock()
                let cluster = try await TestCluster.start(stores: ["\#(appName)": \#(name).app(environment: .mock)], clock: clock)
                try await cluster.dispatch(\#(name).Action.closeIn(seconds: 60), to: "\#(appName)")
                // The store's effect sends the schedule to the dispatcher: advance once it is there.
                try await eventually("the dispatcher to hold the schedule") { cluster.pendingSchedules() == 1 }
                clock.advance(by: .seconds(60))
                let closed = try await cluster.state(of: "\#(appName)", as: \#(name).State.self) { $0.isClosed }
                #expect(closed.options.isEmpty)
                #expect(cluster.pendingSchedules() == 0)
                try await cluster.shutdown()
            }
        }

        /// The dispatcher's side: what its middleware sees of each action, run here without a cluster.
        @Suite("\#(name)'s middleware")
        struct \#(name)MiddlewareTests {
            @Test("each action is counted under where it came from: a client's vote, an effect's ballot")
            func countsByOrigin() throws {
                let app = \#(name).app(environment: .mock)
                let host = RecordingMiddlewareHost()
                let vote = try app.wirePayload(type: "voteCast", argumentsJSON: Array(#"{"option":"tea"}"#.utf8))
                let ballot = try app.wirePayload(type: "ballotLoaded", argumentsJSON: Array(#"{"options":["tea"]}"#.utf8))
                _ = try app.admit(actionType: "voteCast", payload: vote, client: 1, origin: .client, host: host)
                _ = try app.admit(actionType: "ballotLoaded", payload: ballot, client: 2, origin: .effect, host: host)
                #expect(host.counts == ["\#(appName).voteCast.client": 1, "\#(appName).ballotLoaded.effect": 1])
            }
        }

        struct Unreachable: Error, CustomStringConvertible {
            var description: String { "the ballot server did not answer" }
        }

        """#
    }
}

import NodeCores
import Testing

/// The pipelined group commit's decisions (``SyncPipeline``), which the real loop and the simulator's
/// dispatcher both ask: they lived in `DispatcherLoop` alone, and the simulator modelled one fsync in
/// flight.
@Suite("The pipelined group commit: two syncs in flight, proven in either order, the interpreter told once")
struct SyncPipelineTests {
    @Test("a second sync starts while one is in flight; a third waits for one to return")
    func waitBeforeAThird() {
        var pipeline = SyncPipeline(lanes: 2, durable: 4)
        #expect(pipeline.next(checkpointDue: false) == .start(lane: 0))
        pipeline.started(lane: 0, covering: 10)
        #expect(pipeline.next(checkpointDue: false) == .start(lane: 1))
        pipeline.started(lane: 1, covering: 20)
        #expect(pipeline.inFlight == 2)
        #expect(pipeline.newestCovered == 20)
        #expect(pipeline.next(checkpointDue: false) == .waitForOne)
        #expect(pipeline.takeReport() == nil)
        pipeline.returned(lane: 0, proved: 10)
        #expect(pipeline.next(checkpointDue: false) == .start(lane: 0))
        #expect(pipeline.takeReport() == 10)
        #expect(pipeline.takeReport() == nil)
    }

    @Test("a newer sync that returns first proves its seq; the older one, returning after, tells the interpreter nothing")
    func outOfOrder() {
        var pipeline = SyncPipeline(lanes: 2, durable: 0)
        pipeline.started(lane: 0, covering: 10)
        pipeline.started(lane: 1, covering: 20)
        pipeline.returned(lane: 1, proved: 20)
        #expect(pipeline.hasNews)
        #expect(pipeline.takeReport() == 20)
        #expect(pipeline.inFlight == 1)
        pipeline.returned(lane: 0, proved: 10)
        #expect(!pipeline.hasNews)
        #expect(pipeline.takeReport() == nil)
        #expect(pipeline.proven == 20 && pipeline.reported == 20)
        #expect(pipeline.inFlight == 0)
    }

    @Test("in order, each return is told in turn; a sync that proves nothing (the journal was cut) tells nothing")
    func inOrderAndVoid() {
        var pipeline = SyncPipeline(lanes: 2, durable: 0)
        pipeline.started(lane: 0, covering: 10)
        pipeline.started(lane: 1, covering: 20)
        pipeline.returned(lane: 0, proved: 10)
        #expect(pipeline.takeReport() == 10)
        pipeline.returned(lane: 1, proved: nil)
        #expect(pipeline.takeReport() == nil)
        #expect(pipeline.newestCovered == 10)
    }

    @Test("a checkpoint due syncs in place once every sync in flight returned, and the caller tells the interpreter itself")
    func checkpoint() {
        var pipeline = SyncPipeline(lanes: 2, durable: 0)
        pipeline.started(lane: 0, covering: 10)
        #expect(pipeline.next(checkpointDue: true) == .waitForAllThenSyncInPlace)
        pipeline.returned(lane: 0, proved: 10)
        pipeline.syncedInPlace(through: 30)
        #expect(pipeline.takeReport() == nil)
        #expect(pipeline.reported == 30)
        pipeline.provenInPlace(35)
        #expect(pipeline.takeReport() == 35)
    }

    @Test("a cut takes back what was proven or covered past it")
    func cut() {
        var pipeline = SyncPipeline(lanes: 2, durable: 0)
        pipeline.started(lane: 0, covering: 10)
        pipeline.returned(lane: 0, proved: 10)
        _ = pipeline.takeReport()
        pipeline.started(lane: 1, covering: 20)
        pipeline.cut(to: 6)
        #expect(pipeline.proven == 6 && pipeline.reported == 6 && pipeline.newestCovered == 6)
        pipeline.returned(lane: 1, proved: nil)
        pipeline.started(lane: 0, covering: 8)
        pipeline.returned(lane: 0, proved: 8)
        #expect(pipeline.takeReport() == 8)
    }

    @Test("one lane: the second sync waits for the first")
    func oneLane() {
        var pipeline = SyncPipeline(lanes: 1, durable: 0)
        pipeline.started(lane: 0, covering: 3)
        #expect(pipeline.next(checkpointDue: false) == .waitForOne)
        #expect(pipeline.idleLane == nil)
    }
}

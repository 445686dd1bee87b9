import Foundation
import NIOCore
import NIOPosix
@_spi(PGModelInternals) @testable import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelIO
@_spi(PGModelInternals) @testable import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import Testing

/// What a service connection runs on its event loop and what leaves it: short requests stay
/// on the loop their bytes arrived on; work that grows with the request — a long line, a save of many
/// rows, schema changes, a large answer — runs on the global executor, where it delays no other
/// connection's I/O. No database: the rules and the executors themselves.
@Suite("Request weight")
struct RequestWeightTests {
    func row(_ i: Int) -> RowValues { RowValues(entity: "Note", id: UUID(), values: ["rank": .int(Int64(i))]) }

    @Test func shortRequestsStayAndGrowingWorkLeaves() {
        #expect(!RequestWeight.isHeavy(line: ByteBuffer(string: #"{"id":1,"op":"ping"}"#)))
        #expect(RequestWeight.isHeavy(line: ByteBuffer(repeating: UInt8(ascii: " "), count: RequestWeight.lightLineBytes + 1)))

        #expect(!RequestWeight.isHeavy(.fetch(FetchRequest(entity: "Note"))))
        #expect(!RequestWeight.isHeavy(.count(FetchRequest(entity: "Note"))))
        #expect(!RequestWeight.isHeavy(.save(SaveRequest(inserts: [row(1)]))))
        #expect(!RequestWeight.isHeavy(.save(SaveRequest(inserts: (0..<RequestWeight.lightSaveChanges).map(row)))))
        #expect(RequestWeight.isHeavy(.save(SaveRequest(inserts: (0...RequestWeight.lightSaveChanges).map(row)))))
        #expect(RequestWeight.isHeavy(.save(SaveRequest(batchDeletes: [FetchRequest(entity: "Note")]))))
        #expect(RequestWeight.isHeavy(.register(SchemaDescription(entities: []))))
        #expect(RequestWeight.isHeavy(.history(HistoryRequest())))
        #expect(RequestWeight.isHeavy(.hello(HelloPayload(user: "alice", password: "secret"))))
        #expect(!RequestWeight.isHeavy(.ping))

        let id = RequestID.int(1)
        func table(_ rows: Int) -> Response {
            var table = FetchedTable(shapes: [.init(entity: "Note", keys: ["rank"])], rows: [])
            table.rows = (0..<rows).map { .init(shape: 0, id: UUID(), values: [.int(Int64($0))]) }
            return Response(id: id, .table(table))
        }
        #expect(!RequestWeight.isHeavy(table(1)))
        #expect(!RequestWeight.isHeavy(table(RequestWeight.lightAnswerRows)))
        #expect(RequestWeight.isHeavy(table(RequestWeight.lightAnswerRows + 1)))
        #expect(!RequestWeight.isHeavy(Response(id: id, error: WireError(.invalidField, "no"))))
        #expect(!RequestWeight.isHeavy(Response(id: id, .count(1_000_000))))
    }

    /// Reads run in the request's own task, their waits bounded by the request's budget below the
    /// dispatcher; whatever writes or changes the schema keeps the ``Deadline`` backstop, so that nothing
    /// commits after its client was answered `timeout`.
    @Test func readsRunWithoutTheBackstopAndWritesKeepIt() {
        let fetch = FetchRequest(entity: "Note")
        let record = RowReference(entity: "Note", id: UUID())
        for read: Request.Operation in [.fetch(fetch), .fetchTable(fetch), .count(fetch), .ids(fetch), .shares(record)] {
            #expect(RequestDispatcher.isBoundedBelow(read), "\(read.name)")
        }
        let share = ShareChange(record: record, user: "bob", permission: .readOnly)
        for other: Request.Operation in [
            .save(SaveRequest(inserts: [row(1)])), .share(share), .unshare(share), .register(SchemaDescription(entities: [])),
            .history(HistoryRequest()), .deleteHistory(HistoryRequest()), .ping,
        ] {
            #expect(!RequestDispatcher.isBoundedBelow(other), "\(other.name)")
        }
    }

    @Test func heavyWorkLeavesTheEventLoopAndLightWorkStays() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let executor = EventLoopTaskExecutor(eventLoop: loop)
        let (light, heavy) = await withTaskExecutorPreference(executor) {
            let light = await RequestWeight.run(heavy: false) { loop.inEventLoop }
            let heavy = await RequestWeight.run(heavy: true) { MultiThreadedEventLoopGroup.currentEventLoop == nil }
            return (light, heavy)
        }
        #expect(light)
        #expect(heavy)
    }

    @Test func aDeadlineRunsItsWorkOnTheGivenExecutorAndStillExpires() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let executor = EventLoopTaskExecutor(eventLoop: loop)
        // The body starts on the caller's thread (`Task.immediate`); once resumed after its first suspension (a
        // continuation resumed from another thread, as a database answer is) it runs where told. Not
        // `Task.yield()`, which may put the task straight back on the global executor.
        @Sendable func awaitAnotherThread() async {
            await withCheckedContinuation { continuation in DispatchQueue.global().async { continuation.resume() } }
        }
        #expect(try await Deadline(.seconds(30), operation: "'fetch'", executor: executor).run {
            await awaitAnotherThread()
            return loop.inEventLoop
        })
        #expect(try await Deadline(.seconds(30), operation: "'fetch'").run {
            await awaitAnotherThread()
            return MultiThreadedEventLoopGroup.currentEventLoop == nil
        })
        // A body that never finishes still gets its answer at the deadline, on the loop too.
        let error = await #expect(throws: PGModelError.self) {
            try await Deadline(.milliseconds(50), operation: "'fetch'", executor: executor).run {
                try await Task.sleep(for: .seconds(30))
                return 1
            }
        }
        #expect(error?.code == .timeout)
    }
}

import Foundation
import PGModelTesting
#if canImport(Glibc)
import Glibc
#endif
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
import Synchronization
import Testing

@_spi(PGModelInternals) @testable import PGModel

/// PostgreSQL is killed (immediate stop, as a crash) and restarted while observers run and a writer keeps
/// saving. Every committed transaction must reach the observers exactly once, in token order, and none
/// that did not commit. scripts/test.sh runs this suite alone, after the others, because it takes the
/// shared cluster down; without an embedded cluster (`PGMODEL_RESTART_COMMAND` unset) it is skipped.
@Suite("ResilienceTests", .serialized, .timeLimit(.minutes(15)),
       .enabled(if: ProcessInfo.processInfo.environment["PGMODEL_RESTART_COMMAND"] != nil, "needs the embedded cluster (scripts/test.sh)"))
struct ResilienceTests {
    typealias Note = HistoryNotes.Note
    typealias Folder = HistoryNotes.Folder

    /// How many restarts each store sees in one run (`PGMODEL_RESILIENCE_ROUNDS`, default 1): the same
    /// container, observers and writer live through all of them.
    static let rounds = ProcessInfo.processInfo.environment["PGMODEL_RESILIENCE_ROUNDS"].flatMap(Int.init).map { max(1, $0) } ?? 1

    // Both stores: a save in flight when PostgreSQL dies gets an answer within its deadline (5 s here),
    // through the service too, where it once waited forever on the server's pool.
    @Test(arguments: StoreKind.allCases)
    func everyCommittedChangeIsDeliveredExactlyOnceInOrderAcrossARestart(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Folder.self, Note.self], service: kind == .service ? try await TestService.seeds() : nil,
                                            requestTimeout: .seconds(5))
        let delivered = Mutex<[HistoryRecord]>([])
        let container = f.container
        let observer = try await offCooperativePool {
            _ = try container.bridge.run {
                try await container.historyFeed.register { records in delivered.withLock { $0 += records } }
            }
            return try HistoryObserver(observedModels: [Note.self], modelContainer: container)
        }
        let writer = NoteWriter(container: container, prefix: f.token)
        writer.start()
        // Waits block a thread: never a cooperative one, which the in-process service needs.
        #expect(try await offCooperativePool { writer.waitForSuccesses(10) }, "the writer saves before the restart")
        for round in 1...Self.rounds {
            try await restartPostgreSQL()
            let saved = try await offCooperativePool { writer.waitForSuccesses(writer.successes + 10, seconds: 120) }
            #expect(saved, "the writer saves again after restart \(round)")
            if !saved { break }
        }
        try await offCooperativePool { writer.stop() }

        let committed: Set<UUID> = try await offCooperativePool {
            let reader = ModelContext(container)
            return Set(try reader.fetch(FetchDescriptor<Note>()).map { $0.persistentModelID.uuid })
        }
        #expect(committed.count >= 20)
        let caughtUp = try await offCooperativePool {
            waitUntil(reading: { _ = observer.eventCounter }, seconds: 120) { observer.eventCounter >= committed.count }
        }
        #expect(caughtUp)
        #expect(observer.eventCounter == committed.count)

        let records = delivered.withLock { $0 }
        let tokens = records.map(\.token)
        #expect(tokens == tokens.sorted() && Set(tokens).count == tokens.count, "in token order, none twice")
        let inserted = records.flatMap { $0.changes.filter { $0.kind == .insert && $0.entity == "Note" }.map(\.id) }
        #expect(inserted.count == Set(inserted).count)
        #expect(Set(inserted) == committed, "exactly the committed notes, each once")
        if kind == .direct {
            // Through the service, saves may instead wait for the server's pool to reconnect.
            #expect(writer.failures > 0, "the restart interrupted some saves")
        }
    }

}

/// Runs `PGMODEL_RESTART_COMMAND` (scripts/test.sh's PostgreSQL restart) and waits for it. (Foundation's
/// `Process.waitUntilExit` never returns here: `pg_ctl start` leaves the server running in the background
/// with the command's descriptors.)
func restartPostgreSQL() async throws {
    let command = ProcessInfo.processInfo.environment["PGMODEL_RESTART_COMMAND"] ?? ""
    // `system` hands the command every descriptor of this process, and the PostgreSQL it starts keeps them
    // for its lifetime: a test service's listening socket among them would stay open after the service
    // stopped. The shell closes all but the standard three before it runs the command.
    let closing = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done 2>/dev/null; "#
    let status = try await offCooperativePool { system("bash -c '\(closing)exec \(command)'") }
    #expect(status == 0, "\(command) succeeded")
}

/// Saves one note per iteration on a thread of its own until stopped; a failed save (the database is
/// down) is rolled back and retried with a new note. Whether a failed save committed is not known to
/// the writer — the test compares what the observers saw with what the table holds.
final class NoteWriter: @unchecked Sendable {
    // @unchecked: counters and the stop flag are guarded by `condition`; the context lives on the thread.
    private let container: ModelContainer
    private let prefix: String
    private let condition = NSCondition()
    private var stopped = false
    private var done = false
    private var saved = 0
    private var failed = 0

    /// Saves that succeeded so far.
    var successes: Int { condition.lock(); defer { condition.unlock() }; return saved }
    /// Saves that threw so far.
    var failures: Int { condition.lock(); defer { condition.unlock() }; return failed }

    init(container: ModelContainer, prefix: String) {
        self.container = container
        self.prefix = prefix
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 4 << 20
        thread.start()
    }

    private func run() {
        let context = ModelContext(container)
        context.author = "writer"
        var i = 0
        while true {
            condition.lock()
            let shouldStop = stopped
            condition.unlock()
            if shouldStop { break }
            i += 1
            context.insert(HistoryNotes.Note(title: "\(prefix)-\(i)", body: ""))
            do {
                try context.save()
                condition.lock(); saved += 1; condition.broadcast(); condition.unlock()
            } catch {
                context.rollback()
                condition.lock(); failed += 1; condition.unlock()
                // Pace retries while the database is down; this is the writer's rhythm, not a test wait.
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        condition.lock(); done = true; condition.broadcast(); condition.unlock()
    }

    /// Waits until `count` saves succeeded; `false` on timeout.
    func waitForSuccesses(_ count: Int, seconds: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while saved < count {
            if !condition.wait(until: deadline) { return saved >= count }
        }
        return true
    }

    /// Stops the writer and waits for its last save to finish.
    func stop() {
        condition.lock()
        stopped = true
        while !done { condition.wait() }
        condition.unlock()
    }
}

import Foundation
import PGModelTesting
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModel

/// A lost-update checker in the style of Jepsen: clients in threads of their own (half on a second
/// container, as another process) increment counters and add elements to a set on one shared record while
/// PostgreSQL is killed and restarted under them (and, through the service, the service stopped and started
/// again on its port). Each knows which of its saves were
/// acknowledged and which failed without an answer (they may or may not have committed). At the end:
///
/// - the `.merge(.sum)` counter holds every acknowledged increment, and at most the unknown ones besides;
/// - the `.merge(.union)` set holds every acknowledged element, and nothing no client sent;
/// - the counter without a rule, incremented under the throwing policy (a `save_conflict` is refreshed and
///   retried), holds every acknowledged increment too: no acknowledged save was overwritten.
///
/// It takes the shared cluster down, so scripts/test.sh runs it in a phase of its own, after the others;
/// without an embedded cluster (`PGMODEL_RESTART_COMMAND` unset) it is skipped. `PGMODEL_LOST_UPDATE_ROUNDS`
/// restarts (3 by default) come one after another, each after 20 more acknowledged saves.
@Suite("LostUpdateCheckTests", .serialized, .timeLimit(.minutes(15)),
       .enabled(if: ProcessInfo.processInfo.environment["PGMODEL_RESTART_COMMAND"] != nil, "needs the embedded cluster (scripts/test.sh)"))
struct LostUpdateCheckTests {
    typealias Memo = ConflictModels.EditedMemo

    static let rounds = ProcessInfo.processInfo.environment["PGMODEL_LOST_UPDATE_ROUNDS"].flatMap(Int.init).map { max(1, $0) } ?? 3

    @Test(arguments: StoreKind.allCases)
    func noAcknowledgedIncrementOrElementIsLostAcrossARestart(kind: StoreKind) async throws {
        // Through the service, a service of this test's own, its user the clients' one user.
        let serviceUser: TestServiceUser? = kind == .service ? try await TestServiceUser.start(ConflictModels.models) : nil
        let containers = try await offCooperativePool { () throws -> (ModelContainer, ModelContainer) in
            var configuration: ModelConfiguration
            if let serviceUser {
                configuration = ModelConfiguration(url: serviceUser.userURL)
            } else {
                configuration = ModelConfiguration(url: try PGModelTestDatabase.url(schemaName: PGModelTestDatabase.uniqueSchemaName("lu")))
            }
            configuration.requestTimeout = .seconds(5)
            let schema = Schema(ConflictModels.models)
            return (try ModelContainer(for: schema, configurations: configuration), try ModelContainer(for: schema, configurations: configuration))
        }
        let (first, second) = containers
        let key = "jepsen-\(UUID().uuidString)"
        try await offCooperativePool {
            let context = ModelContext(first)
            context.insert(Memo(key: key, title: "shared"))
            try context.save()
        }
        let tally = SaveTally()
        let clients = (0..<4).map { i in MemoIncrementer(container: i % 2 == 0 ? first : second, key: key, client: i, tally: tally) }
        for client in clients { client.start() }
        #expect(try await offCooperativePool { tally.wait(for: 20, seconds: 120) }, "the clients save before the restart")
        for round in 1...Self.rounds {
            try await restartPostgreSQL()
            var saved = try await offCooperativePool { tally.wait(for: tally.count + 20, seconds: 120) }
            #expect(saved, "the clients save again after restart \(round)")
            if let serviceUser, saved {
                // The service too: stopped, and started again on its port.
                try await serviceUser.restart()
                saved = try await offCooperativePool { tally.wait(for: tally.count + 20, seconds: 120) }
                #expect(saved, "the clients save again after the service's restart \(round)")
            }
            if !saved { break }
        }
        try await offCooperativePool { for client in clients { client.stop() } }
        defer { if let serviceUser { Task { await serviceUser.service.shutdown() } } }

        let outcomes = clients.map(\.outcome)
        let acked = outcomes.reduce(0) { $0 + $1.acknowledged }
        let unknown = outcomes.reduce(0) { $0 + $1.unknown }
        let ackedTags = outcomes.reduce(into: Set<String>()) { $0.formUnion($1.acknowledgedTags) }
        let sentTags = outcomes.reduce(into: Set<String>()) { $0.formUnion($1.unknownTags) }.union(ackedTags)
        let (views, edits, tags) = try await offCooperativePool {
            let memo = try #require(try ModelContext(first).fetch(FetchDescriptor<Memo>(predicate: #Predicate { $0.key == key })).first)
            return (memo.views, memo.edits, memo.tags)
        }
        #expect(acked >= 40)
        #expect(views >= acked && views <= acked + unknown, "the sum counter: \(views) for \(acked) acknowledged, \(unknown) unknown")
        #expect(edits >= acked && edits <= acked + unknown, "the counter without a rule: \(edits) for \(acked) acknowledged, \(unknown) unknown")
        #expect(ackedTags.isSubset(of: Set(tags)), "every acknowledged element is there")
        #expect(Set(tags).isSubset(of: sentTags) && Set(tags).count == tags.count, "no element nobody sent, none twice")
        #expect(outcomes.reduce(0) { $0 + $1.conflicts } > 0, "the clients met conflicts and retried them")
    }
}

/// One client: on a thread of its own, reads the shared memo, adds one to each counter and one element to
/// its set, and saves, until stopped. A `save_conflict` (another client changed `edits` meanwhile) is
/// refreshed and retried; any other failure leaves the save's outcome unknown.
final class MemoIncrementer: @unchecked Sendable {
    // @unchecked: the outcome and the stop flag are guarded by `condition`; the context lives on the thread.
    struct Outcome {
        var acknowledged = 0
        var unknown = 0
        var conflicts = 0
        var acknowledgedTags = Set<String>()
        var unknownTags = Set<String>()
    }

    private let container: ModelContainer
    private let key: String
    private let client: Int
    private let tally: SaveTally
    private let condition = NSCondition()
    private var stopped = false
    private var done = false
    private var state = Outcome()

    var outcome: Outcome { condition.lock(); defer { condition.unlock() }; return state }

    init(container: ModelContainer, key: String, client: Int, tally: SaveTally) {
        self.tally = tally
        self.container = container
        self.key = key
        self.client = client
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 4 << 20
        thread.start()
    }

    private func run() {
        let context = ModelContext(container)
        let key = self.key
        var i = 0
        while true {
            condition.lock()
            let shouldStop = stopped
            condition.unlock()
            if shouldStop { break }
            i += 1
            let tag = "c\(client)-\(i)"
            var retrying = true
            while retrying {
                retrying = false
                context.rollback()
                do {
                    guard let memo = try context.fetch(FetchDescriptor<ConflictModels.EditedMemo>(predicate: #Predicate { $0.key == key })).first else {
                        break
                    }
                    memo.views += 1
                    memo.edits += 1
                    memo.tags.append(tag)
                    try context.save()
                    condition.lock(); state.acknowledged += 1; state.acknowledgedTags.insert(tag); condition.unlock()
                    tally.add()
                } catch let error as PGModelError where error.code == .saveConflict {
                    condition.lock(); state.conflicts += 1; condition.unlock()
                    retrying = true
                } catch {
                    condition.lock(); state.unknown += 1; state.unknownTags.insert(tag); condition.unlock()
                    // Pace retries while the database is down; this is the client's rhythm, not a test wait.
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
        }
        context.rollback()
        condition.lock(); done = true; condition.broadcast(); condition.unlock()
    }

    /// Stops the client and waits for its last save to finish.
    func stop() {
        condition.lock()
        stopped = true
        while !done { condition.wait() }
        condition.unlock()
    }
}

/// Acknowledged saves of all clients together, to wait for without polling.
final class SaveTally: @unchecked Sendable {
    // @unchecked: `total` is guarded by `condition`.
    private let condition = NSCondition()
    private var total = 0

    var count: Int { condition.lock(); defer { condition.unlock() }; return total }

    func add() {
        condition.lock(); total += 1; condition.broadcast(); condition.unlock()
    }

    /// Waits until `target` saves were acknowledged; `false` on timeout.
    func wait(for target: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while total < target {
            if !condition.wait(until: deadline) { return total >= target }
        }
        return true
    }
}

/// A test service of its own and one user of it, which the test stops and starts again on the same port
/// and schema, as an operator restarts `pgmodel serve`: its clients' connections break and they reconnect.
final class TestServiceUser: @unchecked Sendable {
    // @unchecked: `service` is replaced only by `restart()`, which the test calls from one task.
    private(set) var service: PGModelTestService
    let userURL: URL

    private init(service: PGModelTestService, userURL: URL) {
        self.service = service
        self.userURL = userURL
    }

    static func start(_ types: [any PersistentModel.Type]) async throws -> TestServiceUser {
        let service = try await PGModelTestService.start()
        try await service.register(Schema(types))
        return TestServiceUser(service: service, userURL: try await service.makeUser("jepsen"))
    }

    /// Stops the service (its connections are answered and closed) and starts another on its port.
    func restart() async throws {
        let port = service.port, schemaName = service.schemaName
        await service.shutdown()
        service = try await PGModelTestService.start(schemaName: schemaName) { $0.port = port }
    }
}

import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
import PGModelTesting
import Testing

/// In-memory stores and PGModelTesting on a machine where PostgreSQL is installed and nothing runs: CI
/// runs this suite before it starts any cluster, with no DATABASE_URL or PGMODEL_TEST_DATABASE_URL.
@Suite("In-memory stores without a running server")
struct InMemoryWithoutServerTests {
    @Model final class Flashcard {
        var front: String
        var back: String
        var creationDate: Date

        init(front: String, back: String, creationDate: Date = .now) {
            self.front = front
            self.back = back
            self.creationDate = creationDate
        }
    }

    /// The seed's XCTest set-up, as written: no URL, no server to know of.
    @Test("the seed's in-memory set-up works as written")
    func seedSetUp() throws {
        let schema = Schema([Flashcard.self])
        let config = ModelConfiguration(isStoredInMemoryOnly: true)
        if ProcessInfo.processInfo.environment["DATABASE_URL"] == nil {
            #expect(config.url == URL(fileURLWithPath: "/dev/null"))
        }
        let container = try ModelContainer(for: schema, configurations: config)
        let modelContext = ModelContext(container)
        modelContext.insert(Flashcard(front: "Who invented the compiler?", back: "Grace Hopper"))
        let cards = try modelContext.fetch(FetchDescriptor<Flashcard>())
        #expect(cards.count == 1)
        #expect(cards.first?.back == "Grace Hopper")
        try modelContext.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Flashcard>()) == 1)
    }

    @Test("in-memory containers share the private cluster, each in a schema of its own")
    func containersAreIsolated() throws {
        // SwiftData's other spelling of an in-memory store: the URL /dev/null. It always uses the
        // private cluster, whatever DATABASE_URL says.
        let devNull = ModelConfiguration(url: URL(fileURLWithPath: "/dev/null"))
        let first = try ModelContainer(for: Flashcard.self, configurations: devNull)
        let second = try ModelContainer(for: Flashcard.self, configurations: devNull)
        let context = ModelContext(first)
        context.insert(Flashcard(front: "a", back: "b"))
        try context.save()
        #expect(try ModelContext(first).fetchCount(FetchDescriptor<Flashcard>()) == 1)
        #expect(try ModelContext(second).fetchCount(FetchDescriptor<Flashcard>()) == 0)
    }

    @Test("PGModelTesting's service runs on the private cluster: two users, real TCP, each sees their own")
    func testingService() async throws {
        let cluster = try EphemeralCluster.shared.url()
        let service = try await PGModelTestService.start(databaseURL: cluster)
        let admin = try await service.makeUser("admin", isAdmin: true)
        let alice = try await service.makeUser("alice")
        let bob = try await service.makeUser("bob")
        try await offCooperativePool {
            _ = try ModelContainer(for: Flashcard.self, configurations: ModelConfiguration(url: admin))
            let aliceContext = ModelContext(try ModelContainer(for: Flashcard.self, configurations: ModelConfiguration(url: alice)))
            aliceContext.insert(Flashcard(front: "alice's", back: "card"))
            try aliceContext.save()
            let bobContext = ModelContext(try ModelContainer(for: Flashcard.self, configurations: ModelConfiguration(url: bob)))
            #expect(try bobContext.fetchCount(FetchDescriptor<Flashcard>()) == 0)
            #expect(try aliceContext.fetch(FetchDescriptor<Flashcard>()).map(\.front) == ["alice's"])
        }
        await service.shutdown()
    }

    @Test("without PostgreSQL's server programs the error names the package and DATABASE_URL")
    func missingBinaries() throws {
        let error = #expect(throws: PGModelError.self) {
            try PostgresBinaries.find(environment: ["PATH": "/nonexistent"], debian: "/nonexistent")
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("apt-get install postgresql") == true)
        #expect(error?.message.contains("DATABASE_URL") == true)
    }

    @Test("clusters left by killed processes are reaped; a live process's cluster is kept")
    func reaping() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("pgmodel-reap-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        // A pid that has certainly ended: a child we waited for.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let dead = root + "/c-\(child.processIdentifier)-1"
        let alive = root + "/c-\(ProcessInfo.processInfo.processIdentifier)-2"
        let building = root + "/building-\(child.processIdentifier)-3"
        for folder in [dead, alive, building] {
            try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        }
        EphemeralCluster.reapAbandoned(in: root)
        #expect(!FileManager.default.fileExists(atPath: dead))
        #expect(!FileManager.default.fileExists(atPath: building))
        #expect(FileManager.default.fileExists(atPath: alive))
    }
}

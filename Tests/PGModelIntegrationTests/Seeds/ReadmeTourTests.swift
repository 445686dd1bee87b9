import Foundation
@_spi(PGModelInternals) import PGModel
import PGModelTesting
import Testing

// The README's five-minute tour, verbatim except for the URLs (a fresh schema and a fresh service
// user instead of the fixed ones) and `print` turned into expectations.

@Model final class Trip {
    @Attribute(.unique) var name: String
    var destination: String
    var startDate: Date
    var budget: Double
    var notes: String?

    init(name: String, destination: String, startDate: Date, budget: Double) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.budget = budget
    }
}

@Suite("README tour")
struct ReadmeTourTests {
    @Test func directStore() async throws {
        let url = try TestDatabase.schemaURL()
        try await offCooperativePool {
            let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)

            context.insert(Trip(name: "Spring in Paris", destination: "Paris", startDate: .now, budget: 1200))
            context.insert(Trip(name: "Roman holiday", destination: "Rome", startDate: .now.addingTimeInterval(86_400), budget: 900))
            try context.save()

            let search = "paris"
            let descriptor = FetchDescriptor<Trip>(
                predicate: #Predicate { $0.destination.localizedStandardContains(search) && $0.budget > 1000 },
                sortBy: [SortDescriptor(\.startDate, order: .reverse)])
            let trips = try context.fetch(descriptor)
            #expect(trips.map(\.name) == ["Spring in Paris"])
        }
    }

    @Test func sharingBetweenUsers() async throws {
        let service = try await TestService.shared()
        try await service.register(Schema([Trip.self]))
        let aliceURL = try await service.newUserURL()
        let bobURL = try await service.newUserURL()
        let bobName = try #require(bobURL.user)
        try await offCooperativePool {
            let remote = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: aliceURL))
            let aliceContext = ModelContext(remote)
            aliceContext.insert(Trip(name: "Alice in Oslo", destination: "Oslo", startDate: .now, budget: 700))
            try aliceContext.save()

            var shared = false
            if let oslo = try aliceContext.fetch(FetchDescriptor<Trip>()).first {
                try aliceContext.share(oslo, with: bobName, permission: .readOnly)
                try aliceContext.save()
                #expect(try aliceContext.shares(of: oslo).map(\.user) == [bobName])

                let bob = ModelContext(try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: bobURL)))
                #expect(try bob.fetch(FetchDescriptor<Trip>()).map(\.name) == ["Alice in Oslo"])

                try aliceContext.unshare(oslo, with: bobName)
                try aliceContext.save()
                #expect(try bob.fetch(FetchDescriptor<Trip>()).isEmpty)
                shared = true
            }
            #expect(shared)
        }
    }

    @Test func serviceUsersSeeOnlyTheirOwnTrips() async throws {
        let service = try await TestService.shared()
        // An admin (or the direct store at deploy time) creates the tables; users register what exists.
        try await service.register(Schema([Trip.self]))
        let aliceURL = try await service.newUserURL()
        let bobURL = try await service.newUserURL()
        try await offCooperativePool {
            let remote = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: aliceURL))
            let aliceContext = ModelContext(remote)
            let token = UUID().uuidString
            aliceContext.insert(Trip(name: "Alice in Oslo \(token)", destination: "Oslo", startDate: .now, budget: 700))
            try aliceContext.save()
            #expect(try aliceContext.fetchCount(FetchDescriptor<Trip>()) == 1)

            // A second client process, another user: sees none of Alice's trips, even by predicate.
            let bobContext = ModelContext(try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: bobURL)))
            #expect(try bobContext.fetchCount(FetchDescriptor<Trip>()) == 0)
            #expect(try bobContext.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "Oslo" })).isEmpty)
            bobContext.insert(Trip(name: "Bob in Bergen \(token)", destination: "Bergen", startDate: .now, budget: 300))
            try bobContext.save()
            #expect(try aliceContext.fetch(FetchDescriptor<Trip>()).map(\.destination) == ["Oslo"])

            // Uniqueness is per owner, as if each user had a store of their own: Bob reusing Alice's unique
            // name makes his own trip, neither taking over hers nor learning that the name is in use.
            bobContext.insert(Trip(name: "Alice in Oslo \(token)", destination: "Nowhere", startDate: .now, budget: 1))
            try bobContext.save()
            #expect(try bobContext.fetchCount(FetchDescriptor<Trip>()) == 2)
            #expect(try ModelContext(remote).fetch(FetchDescriptor<Trip>()).map(\.destination) == ["Oslo"])
        }
    }

    /// "In an async server", verbatim, on both stores, straight from the cooperative pool.
    static func tripsHandler(container: ModelContainer) async throws -> [String] {
        let context = ModelContext(container)                      // one per request; share the container
        context.insert(Trip(name: "Lisbon", destination: "Lisbon", startDate: .now, budget: 500))
        try await context.saveAsync()
        let trips = try await context.fetchAsync(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]))
        return trips.map(\.name)                                   // also fetchCountAsync, fetchIdentifiersAsync,
    }                                                              // modelAsync(for:), fetchHistoryAsync, deleteHistoryAsync

    @Test(arguments: StoreKind.allCases)
    func asyncHandler(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, [Trip.self])
        #expect(try await Self.tripsHandler(container: fixture.container).contains("Lisbon"))
        await fixture.container.close()
    }

    @Test func wrongPasswordIsATypedError() async throws {
        let service = try await TestService.shared()
        let url = try await service.newUserURL()
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.password = "wrong"
        let wrong = try #require(components.url)
        try await offCooperativePool {
            #expect { try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: wrong)) }
                throws: { ($0 as? PGModelError)?.code == .authenticationFailed }
        }
    }

    @Test func badURLsAreTypedErrors() throws {
        #expect { try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: "/tmp/x.sqlite"))) }
            throws: { ($0 as? PGModelError)?.code == .invalidConfiguration }
    }

    // "Tests with no server to start", verbatim (the second's synchronous calls moved off the cooperative pool).
    @Test func tripsAreSaved() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(Trip(name: "Spring in Paris", destination: "Paris", startDate: .now, budget: 1200))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 1)
    }

    @Test func usersSeeTheirOwnTrips() async throws {
        let service = try await PGModelTestService.start()       // pgmodel serve on 127.0.0.1, port 0
        let alice = try await service.makeUser("alice")           // a pgmodel:// URL that logs in as her
        let admin = try await service.makeUser("admin", isAdmin: true)
        try await offCooperativePool {
            _ = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: admin))   // creates the tables
            let context = ModelContext(try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: alice)))
            #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 0)
        }
        await service.shutdown()
    }
}

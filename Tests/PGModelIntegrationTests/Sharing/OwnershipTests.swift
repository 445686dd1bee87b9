import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import Testing
import PGModelTesting

/// Who owns what, asked as apps ask it: `FetchDescriptor.ownership` (`.owned`, `.sharedWithMe`) in
/// fetches, counts and identifiers, with unsaved changes, and `owner(of:)`.
@Suite("Ownership: fetching one's own or what others shared, and asking a model's owner")
struct OwnershipTests {
    typealias Expedition = SharingModels.Expedition
    typealias Waypoint = SharingModels.Waypoint

    static func descriptor<T: PersistentModel>(_ ownership: FetchOwnership, _ predicate: Predicate<T>? = nil) -> FetchDescriptor<T> {
        var descriptor = FetchDescriptor<T>(predicate: predicate)
        descriptor.ownership = ownership
        return descriptor
    }

    @Test("through the service: owned, shared with me and all, for rows, counts, identifiers and cascade children")
    func serviceUsersFetchByOwnership() async throws {
        let alice = try await ServerTestHarness.makeUser("own_alice")
        let bob = try await ServerTestHarness.makeUser("own_bob")
        try await SharingTests.withService { port, _ in
            let aliceContainer = try await SharingContextTests.container(alice, port)
            let bobContainer = try await SharingContextTests.container(bob, port)
            try await offCooperativePool {
                let aliceContext = ModelContext(aliceContainer)
                let shared = Expedition(code: "own-a1", title: "Alps")
                shared.waypoints.append(Waypoint(name: "Col"))
                aliceContext.insert(shared)
                aliceContext.insert(Expedition(code: "own-a2", title: "Andes"))
                try aliceContext.share(shared, with: bob.name, permission: .readWrite)
                try aliceContext.save()

                let bobContext = ModelContext(bobContainer)
                bobContext.insert(Expedition(code: "own-b1", title: "Balkans"))
                try bobContext.save()

                func titles(_ context: ModelContext, _ ownership: FetchOwnership) throws -> [String] {
                    try context.fetch(Self.descriptor(ownership) as FetchDescriptor<Expedition>).map(\.title).sorted()
                }
                #expect(try titles(bobContext, .all) == ["Alps", "Balkans"])
                #expect(try titles(bobContext, .owned) == ["Balkans"])
                #expect(try titles(bobContext, .sharedWithMe) == ["Alps"])
                #expect(try titles(aliceContext, .owned) == ["Alps", "Andes"])
                #expect(try titles(aliceContext, .sharedWithMe) == [])
                #expect(try bobContext.fetchCount(Self.descriptor(.sharedWithMe) as FetchDescriptor<Expedition>) == 1)
                #expect(try bobContext.fetchIdentifiers(Self.descriptor(.owned) as FetchDescriptor<Expedition>).count == 1)
                // A share covers what the record owns through .cascade: the waypoint is shared too.
                #expect(try bobContext.fetch(Self.descriptor(.sharedWithMe) as FetchDescriptor<Waypoint>).map(\.name) == ["Col"])
                #expect(try bobContext.fetch(Self.descriptor(.owned) as FetchDescriptor<Waypoint>).isEmpty)

                // Owners: the creator; a child a read-write grantee adds belongs to the record's owner.
                let alps = try #require(try bobContext.fetch(Self.descriptor(.sharedWithMe) as FetchDescriptor<Expedition>).first)
                let balkans = try #require(try bobContext.fetch(Self.descriptor(.owned) as FetchDescriptor<Expedition>).first)
                #expect(try bobContext.owner(of: alps) == alice.name)
                #expect(try bobContext.owner(of: balkans) == bob.name)
                let added = Waypoint(name: "Pass")
                alps.waypoints.append(added)
                try bobContext.save()
                #expect(try bobContext.owner(of: added) == alice.name)
                #expect(try bobContext.fetch(Self.descriptor(.owned) as FetchDescriptor<Waypoint>).isEmpty)
                #expect(try bobContext.shares(of: alps).map(\.user) == [bob.name])

                // Unsaved changes: an insert counts as bob's own until saved; a changed shared row whose
                // stored values do not match the predicate, but its unsaved ones do, keeps its ownership.
                let pending = Expedition(code: "own-b2", title: "Match")
                bobContext.insert(pending)
                alps.title = "Match"
                let matching = #Predicate<Expedition> { $0.title == "Match" }
                #expect(try bobContext.fetch(Self.descriptor(.owned, matching)).map(\.code) == ["own-b2"])
                #expect(try bobContext.fetch(Self.descriptor(.sharedWithMe, matching)).map(\.code) == ["own-a1"])
                #expect(try bobContext.fetch(Self.descriptor(.all, matching)).map(\.code).sorted() == ["own-a1", "own-b2"])
                #expect(try bobContext.fetchCount(Self.descriptor(.sharedWithMe, matching)) == 1)
                bobContext.rollback()

                // A model not saved yet has no owner to ask for.
                let unsaved = Expedition(code: "own-x", title: "Nowhere")
                bobContext.insert(unsaved)
                #expect { try bobContext.owner(of: unsaved) } throws: { ($0 as? PGModelError)?.code == .notFound }
                bobContext.rollback()
            }
            // The suspending forms answer the same.
            let bobContext = ModelContext(bobContainer)
            let shared = try await bobContext.fetchAsync(Self.descriptor(.sharedWithMe) as FetchDescriptor<Expedition>)
            #expect(shared.map(\.title) == ["Alps"])
            #expect(try await bobContext.ownerAsync(of: try #require(shared.first)) == alice.name)
        }
    }

    @Test("on the direct store its rows have no owner: owned selects them, shared with me nothing")
    func directStoreRowsHaveNoOwner() async throws {
        let f = try await StoreFixture.make(.direct, SharingModels.types)
        try await offCooperativePool {
            let context = f.newContext()
            let expedition = Expedition(code: "own-d-\(f.token)", title: "Dolomites")
            context.insert(expedition)
            try context.save()
            #expect(try context.owner(of: expedition) == nil)
            let code = expedition.code
            let mine = #Predicate<Expedition> { $0.code == code }
            #expect(try context.fetch(Self.descriptor(.owned, mine)).map(\.title) == ["Dolomites"])
            #expect(try context.fetch(Self.descriptor(.sharedWithMe, mine)).isEmpty)
            #expect(try context.fetchCount(Self.descriptor(.all, mine)) == 1)
        }
    }
}

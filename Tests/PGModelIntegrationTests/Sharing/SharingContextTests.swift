import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import ServiceLifecycle
import Testing
import PGModelTesting

/// Sharing as apps write it: `context.share(_:with:permission:)`, `unshare`, `shares(of:)`, observers
/// that follow visibility, and two service instances on one database.
@Suite("Sharing: the ModelContext API, observers and scale-out")
struct SharingContextTests {
    typealias Expedition = SharingModels.Expedition
    typealias Waypoint = SharingModels.Waypoint

    static func container(_ user: AuthenticatedUser, _ port: Int) async throws -> ModelContainer {
        let url = try ServerRemoteStoreTests.url(user, port: port)
        return try await offCooperativePool { try ModelContainer(for: Schema(SharingModels.types), configurations: ModelConfiguration(url: url)) }
    }

    @Test("share and unshare are pending until save; errors fail the whole save; rollback discards them")
    func pendingShares() async throws {
        let alice = try await ServerTestHarness.makeUser("ctx_alice")
        let bob = try await ServerTestHarness.makeUser("ctx_bob")
        try await SharingTests.withService { port, _ in
            let aliceContainer = try await Self.container(alice, port)
            let bobContainer = try await Self.container(bob, port)
            try await offCooperativePool {
                let context = ModelContext(aliceContainer)
                let trip = Expedition(code: "ctx-\(UUID().uuidString)", title: "Alps")
                context.insert(trip)
                trip.waypoints.append(Waypoint(name: "Col"))
                try context.share(trip, with: bob.name, permission: .readOnly)
                #expect(context.hasChanges)
                try context.save()   // inserts, then the share, in one transaction
                let shares = try context.shares(of: trip)
                #expect(shares.map(\.user) == [bob.name])
                #expect(shares.first?.permission == .readOnly)
                #expect(shares.first?.grantedBy == alice.name)

                let bobContext = ModelContext(bobContainer)
                let seen = try bobContext.fetch(FetchDescriptor<Expedition>())
                #expect(seen.map(\.title) == ["Alps"])
                #expect(seen.first?.waypoints.map(\.name) == ["Col"])   // the cascade child, through a fault
                // Bob may read, not write: the save fails with forbidden and writes nothing.
                seen.first?.title = "Bob's"
                #expect { try bobContext.save() } throws: { ($0 as? PGModelError)?.code == .forbidden }
                bobContext.rollback()
                // Nor share it onward.
                if let first = seen.first { try bobContext.share(first, with: alice.name, permission: .readWrite) }
                #expect { try bobContext.save() } throws: { ($0 as? PGModelError)?.code == .forbidden }
                bobContext.rollback()
                #expect(!bobContext.hasChanges)

                // An unknown user fails the save, and nothing of it is written, the other changes included.
                trip.title = "Alps 2"
                try context.share(trip, with: "nobody-\(UUID().uuidString)", permission: .readOnly)
                #expect { try context.save() } throws: { ($0 as? PGModelError)?.code == .notFound }
                context.rollback()
                #expect(try ModelContext(aliceContainer).fetch(FetchDescriptor<Expedition>()).map(\.title) == ["Alps"])

                // Upgrade, then revoke.
                try context.share(trip, with: bob.name, permission: .readWrite)
                try context.save()
                #expect(try context.shares(of: trip).first?.permission == .readWrite)
                let bobAgain = ModelContext(bobContainer)
                try bobAgain.fetch(FetchDescriptor<Expedition>()).first?.title = "Bob's"
                try bobAgain.save()
                try context.unshare(trip, with: bob.name)
                try context.save()
                #expect(try context.shares(of: trip).isEmpty)
                #expect(try ModelContext(bobContainer).fetchCount(FetchDescriptor<Expedition>()) == 0)
                // Bob's change stays: it is Alice's row.
                #expect(try ModelContext(aliceContainer).fetch(FetchDescriptor<Expedition>()).map(\.title) == ["Bob's"])
            }
        }
    }

    @Test("a grantee's ResultsObserver shows a shared record when shared and drops it when revoked")
    func observersFollowVisibility() async throws {
        let alice = try await ServerTestHarness.makeUser("obs_alice")
        let bob = try await ServerTestHarness.makeUser("obs_bob")
        try await SharingTests.withService { port, _ in
            let aliceContainer = try await Self.container(alice, port)
            let bobContainer = try await Self.container(bob, port)
            try await offCooperativePool {
                let bobContext = ModelContext(bobContainer)
                let observer = try ResultsObserver<Waypoint, Never>(modelContext: bobContext)
                #expect(observer.results.isEmpty)
                let context = ModelContext(aliceContainer)
                let trip = Expedition(code: "obs-\(UUID().uuidString)", title: "Coast")
                context.insert(trip)
                trip.waypoints.append(Waypoint(name: "Cape"))
                try context.save()

                try context.share(trip, with: bob.name, permission: .readOnly)
                try context.save()
                #expect(waitUntil(reading: { _ = observer.results }, seconds: 10) { observer.results.map(\.name) == ["Cape"] })

                // A child Alice adds later is part of the share.
                trip.waypoints.append(Waypoint(name: "Bay"))
                try context.save()
                #expect(waitUntil(reading: { _ = observer.results }, seconds: 10) { Set(observer.results.map(\.name)) == ["Cape", "Bay"] })

                try context.unshare(trip, with: bob.name)
                try context.save()
                #expect(waitUntil(reading: { _ = observer.results }, seconds: 10) { observer.results.isEmpty })
            }
        }
    }

    @Test("two service instances on one database: changes and shares made through one hold on the other")
    func twoInstances() async throws {
        let alice = try await ServerTestHarness.makeUser("two_alice")
        let bob = try await ServerTestHarness.makeUser("two_bob")
        let schemaName = TestDatabase.uniqueSchema("two")
        try await ServerTestHarness.register(SharingTests.schema, schemaName: schemaName)
        try await ServerTestHarness.withServer(schemaName: schemaName) { first in
            try await ServerTestHarness.withServer(schemaName: schemaName) { second in
                #expect(first != second)
                let aliceOnFirst = try await Self.container(alice, first)
                let aliceOnSecond = try await Self.container(alice, second)
                let bobOnSecond = try await Self.container(bob, second)
                try await offCooperativePool {
                    let watcher = ModelContext(aliceOnFirst)
                    let observer = try ResultsObserver<Expedition, Never>(modelContext: watcher)
                    #expect(observer.results.isEmpty)
                    // Saved through the second instance, seen by an observer on the first.
                    let writer = ModelContext(aliceOnSecond)
                    let trip = Expedition(code: "two-\(UUID().uuidString)", title: "Fjord")
                    writer.insert(trip)
                    try writer.save()
                    #expect(waitUntil(reading: { _ = observer.results }, seconds: 10) { observer.results.map(\.title) == ["Fjord"] })

                    // Shared through the first instance, enforced by the second.
                    let sharer = ModelContext(aliceOnFirst)
                    let mine = try #require(try sharer.fetch(FetchDescriptor<Expedition>()).first)
                    let bobContext = ModelContext(bobOnSecond)
                    #expect(try bobContext.fetchCount(FetchDescriptor<Expedition>()) == 0)
                    try sharer.share(mine, with: bob.name, permission: .readOnly)
                    try sharer.save()
                    #expect(try bobContext.fetch(FetchDescriptor<Expedition>()).map(\.title) == ["Fjord"])
                    try sharer.unshare(mine, with: bob.name)
                    try sharer.save()
                    #expect(try ModelContext(bobOnSecond).fetchCount(FetchDescriptor<Expedition>()) == 0)
                }
            }
        }
    }
}

import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import PGModelTesting
import Testing

/// Two service users edit one record: its owner and a user it is shared with read-write. The same
/// attribute is a `save_conflict` for whoever saves second, different attributes both stay, and a delete
/// by the owner meets the grantee's update with a typed outcome.
@Suite("Concurrent edits of a shared record by two users")
struct SharedRecordConflictTests {
    typealias Expedition = SharingModels.Expedition
    typealias Waypoint = SharingModels.Waypoint

    @Test func ownerAndReadWriteGrantee() async throws {
        let alice = try await ServerTestHarness.makeUser("cf_alice")
        let bob = try await ServerTestHarness.makeUser("cf_bob")
        try await SharingTests.withService { port, _ in
            let aliceContainer = try await SharingContextTests.container(alice, port)
            let bobContainer = try await SharingContextTests.container(bob, port)
            try await offCooperativePool {
                let owner = ModelContext(aliceContainer)
                let code = "cf-\(UUID().uuidString)"
                let trip = Expedition(code: code, title: "Alps")
                let waypoint = Waypoint(name: "Col")
                owner.insert(trip)
                trip.waypoints.append(waypoint)
                try owner.share(trip, with: bob.name, permission: .readWrite)
                try owner.save()

                let grantee = ModelContext(bobContainer)
                let seen = try #require(try grantee.fetch(FetchDescriptor<Expedition>(predicate: #Predicate { $0.code == code })).first)
                let seenWaypoint = try #require(seen.waypoints.first)

                // The same attribute: the grantee saves first, the owner's save is refused with both values.
                seen.title = "Bob's Alps"
                try grantee.save()
                trip.title = "Alice's Alps"
                var thrown: PGModelError?
                do { try owner.save() } catch let error as PGModelError { thrown = error }
                #expect(thrown?.code == .saveConflict)
                #expect(thrown?.conflicts.first?.attributes == [SaveConflict.Attribute(
                    name: "title", mine: .string("Alice's Alps"), theirs: .string("Bob's Alps"), ancestor: .string("Alps"))])
                // The owner takes the grantee's value.
                try owner.refresh(trip, mergeChanges: false)
                #expect(trip.title == "Bob's Alps")

                // Different attributes of one row (the waypoint's name, the expedition's title) both stay.
                seenWaypoint.name = "Bob's col"
                try grantee.save()
                trip.title = "Alice's Alps"
                try owner.save()
                let check = ModelContext(bobContainer)
                let now = try #require(try check.fetch(FetchDescriptor<Expedition>(predicate: #Predicate { $0.code == code })).first)
                #expect(now.title == "Alice's Alps")
                #expect(now.waypoints.map(\.name) == ["Bob's col"])

                // The owner deletes the waypoint the grantee renamed since the owner read it: refused, then
                // deleted on purpose (this context's delete wins).
                owner.delete(waypoint)
                var changed: PGModelError?
                do { try owner.save() } catch let error as PGModelError { changed = error }
                #expect(changed?.conflicts.map(\.kind) == [.changedBeforeDelete])
                owner.mergePolicy = .mergeByPropertyObjectTrump
                try owner.save()
                // The grantee, still changing it, is told it is gone.
                seenWaypoint.name = "Bob's second col"
                var gone: PGModelError?
                do { try grantee.save() } catch let error as PGModelError { gone = error }
                #expect(gone?.code == .saveConflict)
                #expect(gone?.conflicts.map(\.kind) == [.deleted])
            }
        }
    }
}

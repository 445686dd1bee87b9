import Foundation
@_spi(PGModelInternals) import PGModel
import Testing
import PGModelTesting

/// `PersistentIdentifier`'s store and temporariness against a real store: temporary until the first
/// save, the same identity before and after it, and the store named as history names it.
@Suite("Persistent identifiers")
struct PersistentIdentifierTests {
    @Test(arguments: StoreKind.tested)
    func identifiersAreTemporaryUntilSavedAndKeepTheirIdentity(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Booking.self])
        try await offCooperativePool {
            let context = f.newContext()
            let hotel = "h\(f.token)"
            let booking = Booking(hotel: hotel, room: 1, night: .now, guest: nil)
            #expect(booking.persistentModelID.isTemporary)
            context.insert(booking)
            let before = booking.persistentModelID
            #expect(before.isTemporary)
            try context.save()
            let after = booking.persistentModelID
            #expect(!after.isTemporary)
            #expect(before == after && before.hashValue == after.hashValue)

            let reader = f.newContext()
            let fetched = try #require(try reader.fetch(FetchDescriptor<Booking>(predicate: #Predicate<Booking> { $0.hotel == hotel && $0.room == 1 })).first)
            #expect(!fetched.persistentModelID.isTemporary)
            #expect(fetched.persistentModelID == after)
            let ids = try reader.fetchIdentifiers(FetchDescriptor<Booking>(predicate: #Predicate<Booking> { $0.hotel == hotel }))
            #expect(ids == [after])
            #expect(ids.first?.storeIdentifier == after.storeIdentifier)

            // Round trip through JSON: equal, not temporary, same store.
            let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: try JSONEncoder().encode(before))
            #expect(decoded == after && !decoded.isTemporary)
            #expect(reader.model(for: decoded) === fetched)

            // Inserted then deleted before a save: still temporary.
            let discarded = Booking(hotel: hotel, room: 2, night: .now, guest: nil)
            context.insert(discarded)
            context.delete(discarded)
            #expect(discarded.persistentModelID.isTemporary)
        }
    }

    @Test(arguments: StoreKind.tested)
    func theStoreIsNamedByItsSchemaAsHistoryNamesIt(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Booking.self])
        try await offCooperativePool {
            let context = f.newContext()
            let booking = Booking(hotel: "h\(f.token)", room: 3, night: .now, guest: nil)
            context.insert(booking)
            try context.save()
            let store = try #require(booking.persistentModelID.storeIdentifier)
            #expect(!store.isEmpty)
            let transaction = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
            #expect(transaction.storeIdentifier == store)
            #expect(transaction.token.storeIdentifier == store)
            let changed = try #require(transaction.changes.first?.changedPersistentIdentifier)
            #expect(changed == booking.persistentModelID && changed.storeIdentifier == store)
        }
    }
}

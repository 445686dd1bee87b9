import Foundation
@_spi(PGModelInternals) import PGModel
import Testing
import PGModelTesting

/// Everyday SwiftData calls a ported app makes: save notifications, deleteAllData, section titles,
/// HistoryDescriptor(predicate:sortBy:), and ModelConfiguration's SwiftData initializers.
@Suite("Everyday SwiftData API")
struct EverydayAPITests {
    static func container() async throws -> ModelContainer {
        let url = try TestDatabase.schemaURL()
        return try await offCooperativePool { try ModelContainer(for: Booking.self, configurations: ModelConfiguration(url: url)) }
    }

    final class Received: @unchecked Sendable {
        let lock = NSLock()
        var names: [Notification.Name] = []
        var info: [[AnyHashable: Any]] = []
        func add(_ note: Notification) { lock.lock(); names.append(note.name); info.append(note.userInfo ?? [:]); lock.unlock() }
    }

    @Test("willSave and didSave are posted for every save with the inserted, updated and deleted identifiers")
    func saveNotifications() async throws {
        let container = try await Self.container()
        try await offCooperativePool {
            let context = ModelContext(container)
            let received = Received()
            let tokens = [ModelContext.willSave, ModelContext.didSave].map { name in
                NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { received.add($0) }
            }
            defer { tokens.forEach(NotificationCenter.default.removeObserver) }
            let a = Booking(hotel: "Ritz", room: 1, night: .now), b = Booking(hotel: "Ritz", room: 2, night: .now)
            context.insert(a)
            context.insert(b)
            try context.save()
            a.guest = "Ada"
            context.delete(b)
            try context.save()
            try context.save()   // nothing to save: no notification
            #expect(received.names == [ModelContext.willSave, ModelContext.didSave, ModelContext.willSave, ModelContext.didSave])
            func ids(_ i: Int, _ key: ModelContext.NotificationKey) -> Set<PersistentIdentifier> {
                Set(received.info[i][key.rawValue] as? [PersistentIdentifier] ?? [])
            }
            #expect(ids(1, .insertedIdentifiers) == [a.persistentModelID, b.persistentModelID])
            #expect(ids(3, .updatedIdentifiers) == [a.persistentModelID])
            #expect(ids(3, .deletedIdentifiers) == [b.persistentModelID])
            #expect(ids(3, .insertedIdentifiers).isEmpty)
        }
        await container.close()
    }

    @Test("deleteAllData removes every row in one transaction, and history records the deletes")
    func deleteAllData() async throws {
        let container = try await Self.container()
        try await offCooperativePool {
            let context = ModelContext(container)
            for room in 1...5 { context.insert(Booking(hotel: "Savoy", room: room, night: .now)) }
            try context.save()
            let before = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count
            container.deleteAllData()                  // Apple's signature: it does not throw
            #expect(container.lastDeleteAllDataError == nil)
            let fresh = ModelContext(container)
            #expect(try fresh.fetchCount(FetchDescriptor<Booking>()) == 0)
            let history = try fresh.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(
                predicate: nil, sortBy: [SortDescriptor(\.transactionIdentifier, order: .reverse)]))
            #expect(history.count == before + 1)
            let deletes = history.first?.changes.filter { if case .delete = $0 { true } else { false } }.count
            #expect(deletes == 5)
        }
        await container.close()
    }

    @Test("erase() throws what deleteAllData() keeps in lastDeleteAllDataError, and deletes nothing then")
    func eraseThrowsWhereDeleteAllDataRecords() async throws {
        let writable = try await Self.container()
        let url = try #require(writable.configurations.first?.url)
        let readOnly = try await offCooperativePool {
            let context = ModelContext(writable)
            context.insert(Booking(hotel: "Savoy", room: 1, night: .now))
            context.processPendingChanges()             // SwiftData's undo hook: nothing to do, nothing lost
            #expect(context.hasChanges)
            try context.save()
            let readOnly = try ModelContainer(for: Booking.self, configurations: ModelConfiguration(url: url, allowsSave: false))
            let refused = #expect(throws: PGModelError.self) { try readOnly.erase() }
            #expect(refused?.code == .saveNotAllowed)
            readOnly.deleteAllData()
            #expect(readOnly.lastDeleteAllDataError?.code == .saveNotAllowed)
            #expect(try context.fetchCount(FetchDescriptor<Booking>()) == 1)
            try writable.erase()
            #expect(try context.fetchCount(FetchDescriptor<Booking>()) == 0)
            return readOnly
        }
        await readOnly.close()
        await writable.close()
    }

    @Test("sectioned results list their titles and find a section's position")
    func sectionTitles() async throws {
        let container = try await Self.container()
        try await offCooperativePool {
            let context = ModelContext(container)
            for (hotel, room) in [("Ritz", 1), ("Savoy", 2), ("Ritz", 3)] { context.insert(Booking(hotel: hotel, room: room, night: .now)) }
            try context.save()
            let sections = try context.fetch(FetchDescriptor<Booking>(sortBy: [SortDescriptor(\.room)]), sectionBy: \.hotel)
            #expect(sections.sectionTitles == ["Ritz", "Savoy"])
            #expect(sections.index(ofSectionTitled: "Savoy") == 1)
            #expect(sections.index(ofSectionTitled: "Hilton") == nil)
        }
        await container.close()
    }

    @Test("fetchIdentifiers(_:batchSize:) gives every matching identifier, in order")
    func identifiersInBatches() async throws {
        let container = try await Self.container()
        try await offCooperativePool {
            let context = ModelContext(container)
            let bookings = (1...7).map { Booking(hotel: "Ritz", room: $0, night: .now) }
            bookings.forEach(context.insert)
            try context.save()
            let ids = try context.fetchIdentifiers(FetchDescriptor<Booking>(sortBy: [SortDescriptor(\.room)]), batchSize: 3)
            #expect(ids.count == 7)
            #expect(Array(ids) == bookings.map(\.persistentModelID))
            #expect(throws: PGModelError.self) { try context.fetchIdentifiers(FetchDescriptor<Booking>(), batchSize: 0) }
        }
        await container.close()
    }

    @Test("every system table and column says what it is in psql")
    func systemComments() async throws {
        let container = try await Self.container()   // bootstraps the system SQL
        await container.close()
        let missing = try await Inspect.strings("""
            SELECT c.relname || '.' || a.attname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE n.nspname = 'pgmodel' AND c.relkind IN ('r', 'v') AND col_description(c.oid, a.attnum) IS NULL
            UNION ALL
            SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'pgmodel' AND c.relkind IN ('r', 'v') AND obj_description(c.oid, 'pg_class') IS NULL
            """)
        #expect(missing == [])
    }

    @Test("ModelConfiguration's SwiftData initializers; a CloudKit database is refused with a pointer to sharing")
    func configurations() async throws {
        let forTypes = ModelConfiguration(for: Booking.self, isStoredInMemoryOnly: true)
        #expect(forTypes.isStoredInMemoryOnly)
        #expect(forTypes.schema?.entity(named: "Booking") != nil)
        #expect(ModelConfiguration(isStoredInMemoryOnly: true).isStoredInMemoryOnly)
        let url = try TestDatabase.schemaURL()
        let accepted = try await offCooperativePool {
            try ModelContainer(for: Booking.self, configurations: ModelConfiguration(url: url, cloudKitDatabase: .none))
        }
        await accepted.close()
        let grouped = ModelConfiguration(schema: nil, isStoredInMemoryOnly: false, groupContainer: .identifier("group.example"), cloudKitDatabase: .automatic)
        #expect(grouped.groupContainer == .identifier("group.example"))
        let error = await #expect(throws: PGModelError.self) {
            _ = try await offCooperativePool {
                try ModelContainer(for: Booking.self, configurations: ModelConfiguration(url: url, cloudKitDatabase: .private("iCloud.com.example")))
            }
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("sharing") == true)
    }
}

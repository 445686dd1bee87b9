import Foundation
@_spi(PGModelInternals) import PGModel
import Testing
import PGModelTesting

/// One behaviour suite, run against the direct store and through the service: the same ModelContext
/// code must give the same results on both.
@Suite("Store behaviour")
struct StoreBehaviorTests {
    let day: TimeInterval = 86_400
    let base = Date(timeIntervalSince1970: 1_750_000_000)

    func voyage(_ f: StoreFixture, _ name: String, _ destination: String, day offset: Double, budget: Double = 1000,
                travelers: Int = 1, kind: TripKind = .vacation, notes: String? = nil) -> Voyage {
        Voyage(name: "\(f.token)-\(name)", destination: destination, startDate: base + offset * day,
               endDate: base + (offset + 3) * day, budget: budget, travelers: travelers, kind: kind, notes: notes)
    }

    @Test(arguments: StoreKind.tested)
    func insertSaveFetchRoundTripsEveryAttributeType(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [EveryType.self])
        try await offCooperativePool {
            let writer = f.newContext()
            let originals = (0..<4).map { EveryType(seed: $0) }
            originals.forEach(writer.insert)
            try writer.save()

            let reader = f.newContext()
            let fetched = try reader.fetch(FetchDescriptor<EveryType>(sortBy: [SortDescriptor(\.int32)]))
            #expect(fetched.count == 4)
            for (a, b) in zip(originals, fetched) {
                #expect(a !== b)
                #expect(a.persistentModelID == b.persistentModelID)
                #expect(a.string == b.string); #expect(a.bool == b.bool); #expect(a.int == b.int)
                #expect(a.int8 == b.int8); #expect(a.int16 == b.int16); #expect(a.int32 == b.int32); #expect(a.int64 == b.int64)
                #expect(a.uint8 == b.uint8); #expect(a.uint16 == b.uint16); #expect(a.uint32 == b.uint32)
                #expect(a.double == b.double); #expect(a.float == b.float); #expect(a.decimal == b.decimal)
                #expect(a.date == b.date); #expect(a.uuid == b.uuid); #expect(a.data == b.data); #expect(a.url == b.url)
                #expect(a.kind == b.kind); #expect(a.stars == b.stars)
                #expect(a.optionalString == b.optionalString); #expect(a.optionalInt == b.optionalInt)
                #expect(a.optionalDecimal == b.optionalDecimal); #expect(a.optionalDate == b.optionalDate)
                #expect(a.optionalUUID == b.optionalUUID); #expect(a.optionalData == b.optionalData)
                #expect(a.optionalURL == b.optionalURL); #expect(a.optionalKind == b.optionalKind)
                #expect(a.optionalStars == b.optionalStars)
            }
        }
    }

    /// Both stores return rows positionally (the service as its `table` answer): dates must keep their
    /// microseconds and classes their own values, whatever the row's position in the answer.
    @Test(arguments: StoreKind.tested)
    func fetchedDatesKeepMicroseconds(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Booking.self])
        let micros: [Int64] = [1_700_000_000_123_457, -1_000_000_000_001, 4_102_444_800_000_001, 946_684_800_000_000, 1_700_000_000_250_000]
        try await offCooperativePool {
            let writer = f.newContext()
            for (i, value) in micros.enumerated() {
                writer.insert(Booking(hotel: "h\(f.token)", room: i, night: Date(timeIntervalSince1970: Double(value) / 1_000_000),
                                      guest: i % 2 == 0 ? nil : "guest \"\(i)\"\n"))
            }
            try writer.save()
            let hotel = "h\(f.token)"
            let fetched = try f.newContext().fetch(FetchDescriptor<Booking>(predicate: #Predicate { $0.hotel == hotel },
                                                                            sortBy: [SortDescriptor(\.room)]))
            #expect(fetched.map(\.room) == Array(micros.indices))
            for (booking, value) in zip(fetched, micros) {
                #expect(Int64((booking.night.timeIntervalSince1970 * 1_000_000).rounded()) == value)
                #expect(booking.guest == (booking.room % 2 == 0 ? nil : "guest \"\(booking.room)\"\n"))
            }
        }
    }

    @Test(arguments: StoreKind.tested)
    func predicatesSortingAndPaging(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let context = f.newContext()
            let trips = [
                voyage(f, "a", "Paris", day: 3, budget: 500, travelers: 2),
                voyage(f, "b", "Rome", day: 1, budget: 1500, travelers: 1, kind: .business),
                voyage(f, "c", "Paris", day: 2, budget: 800, travelers: 4, kind: .family, notes: "kids"),
                voyage(f, "d", "Oslo", day: 5, budget: 2500, travelers: 2),
                voyage(f, "e", "Paris", day: 4, budget: 500, travelers: 1, kind: .business),
            ]
            trips.forEach(context.insert)
            try context.save()

            let paris = try context.fetch(FetchDescriptor<Voyage>(
                predicate: #Predicate { $0.destination == "Paris" }, sortBy: [SortDescriptor(\.startDate)]))
            #expect(paris.map(\.name) == ["c", "a", "e"].map { "\(f.token)-\($0)" })

            let byBudgetThenDate = try context.fetch(FetchDescriptor<Voyage>(
                sortBy: [SortDescriptor(\.budget, order: .reverse), SortDescriptor(\.startDate)]))
            #expect(byBudgetThenDate.map(\.name) == ["d", "b", "c", "a", "e"].map { "\(f.token)-\($0)" })

            var page = FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.startDate)])
            page.fetchOffset = 1
            page.fetchLimit = 2
            #expect(try context.fetch(page).map(\.name) == ["c", "a"].map { "\(f.token)-\($0)" })
            #expect(try context.fetchCount(page) == 2)
            #expect(try context.fetchCount(FetchDescriptor<Voyage>()) == 5)

            let ids = try context.fetchIdentifiers(FetchDescriptor<Voyage>(
                predicate: #Predicate { $0.travelers > 1 }, sortBy: [SortDescriptor(\.startDate)]))
            #expect(ids == [trips[2], trips[0], trips[3]].map(\.persistentModelID))
        }
    }

    @Test(arguments: StoreKind.tested)
    func oneInstancePerIdentifierPerContext(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let context = f.newContext()
            let trip = voyage(f, "solo", "Lima", day: 1)
            context.insert(trip)
            try context.save()
            let first = try context.fetch(FetchDescriptor<Voyage>())
            let second = try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.destination == "Lima" }))
            #expect(first.count == 1 && second.count == 1)
            #expect(first[0] === trip && second[0] === trip)
            let registered: Voyage? = context.registeredModel(for: trip.persistentModelID)
            #expect(registered === trip)

            let other = f.newContext()
            let fetchedElsewhere = other.model(for: trip.persistentModelID) as? Voyage
            #expect(fetchedElsewhere !== trip)
            #expect(fetchedElsewhere?.name == trip.name)
            #expect(other.lastFaultError == nil)

            // SwiftData's non-throwing model(for:): a row that is gone gives a fault whose row is gone.
            // Where SwiftData's crashes on access, PGModel's keeps empty values and says why.
            // Voyage.kind is an enum with no empty value, so its gone row gets a stand-in (SeedGraphTests
            // has the fault of a class whose properties all have one).
            let missing = PersistentIdentifier(entityName: "Voyage", id: UUID())
            let gone = other.model(for: missing)
            #expect(other.lastFaultError?.code == .notFound)
            #expect(gone as? Voyage == nil && gone.persistentModelID.id == missing.id)
            #expect(try other.fetchCount(FetchDescriptor<Voyage>(predicate: #Predicate { $0.destination == "Lima" })) == 1)
            let foreign = other.model(for: PersistentIdentifier(entityName: "NoSuchClass", id: UUID()))
            #expect(foreign as? Voyage == nil)
            #expect(other.lastFaultError?.code == .unknownEntity)
        }
    }

    @Test(arguments: StoreKind.tested)
    func updateWritesOnlyChangedColumns(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let setup = f.newContext()
            setup.insert(voyage(f, "shared", "Quito", day: 1, budget: 100, travelers: 1))
            try setup.save()

            let a = f.newContext(), b = f.newContext()
            let inA = try #require(try a.fetch(FetchDescriptor<Voyage>()).first)
            let inB = try #require(try b.fetch(FetchDescriptor<Voyage>()).first)
            inB.budget = 999
            try b.save()
            inA.travelers = 7
            #expect(a.hasChanges)
            #expect(a.changedModelsArray.count == 1)
            try a.save()
            #expect(!a.hasChanges)

            let check = try #require(try f.newContext().fetch(FetchDescriptor<Voyage>()).first)
            #expect(check.budget == 999, "a's save must not overwrite b's budget")
            #expect(check.travelers == 7)
        }
    }

    @Test(arguments: StoreKind.tested)
    func rollbackRestoresEverything(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let context = f.newContext()
            let kept = voyage(f, "kept", "Cairo", day: 1, budget: 100)
            let doomed = voyage(f, "doomed", "Cairo", day: 2)
            context.insert(kept)
            context.insert(doomed)
            try context.save()

            kept.budget = 5
            context.delete(doomed)
            let unsaved = voyage(f, "unsaved", "Cairo", day: 3)
            context.insert(unsaved)
            #expect(context.insertedModelsArray.count == 1)
            #expect(context.changedModelsArray.count == 1)
            #expect(context.deletedModelsArray.count == 1)
            #expect(doomed.isDeleted)

            context.rollback()
            #expect(!context.hasChanges)
            #expect(kept.budget == 100)
            #expect(!doomed.isDeleted)
            #expect(unsaved.modelContext == nil)
            #expect(try context.fetchCount(FetchDescriptor<Voyage>()) == 2)
            #expect(try f.newContext().fetchCount(FetchDescriptor<Voyage>()) == 2)
        }
    }

    @Test(arguments: StoreKind.tested)
    func deleteRemovesRows(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let context = f.newContext()
            let trips = (0..<3).map { voyage(f, "del\($0)", "Baku", day: Double($0)) }
            trips.forEach(context.insert)
            try context.save()
            context.delete(trips[1])
            try context.save()
            let names = try f.newContext().fetch(FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.startDate)])).map(\.name)
            #expect(names == [trips[0].name, trips[2].name])
        }
    }

    @Test(arguments: StoreKind.tested)
    func uniqueAttributeInsertUpdatesTheExistingRow(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let first = f.newContext()
            let original = voyage(f, "same", "Paris", day: 1, budget: 100)
            first.insert(original)
            try first.save()

            let second = f.newContext()
            let duplicate = voyage(f, "same", "Berlin", day: 2, budget: 200)
            second.insert(duplicate)
            try second.save()

            #expect(duplicate.persistentModelID == original.persistentModelID, "the insert took the existing row's identity")
            let all = try f.newContext().fetch(FetchDescriptor<Voyage>())
            #expect(all.count == 1)
            #expect(all.first?.destination == "Berlin")
            #expect(all.first?.budget == 200)
        }
    }

    @Test(arguments: StoreKind.tested)
    func compoundUniqueConstraintUpserts(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Booking.self])
        try await offCooperativePool {
            let night = base
            let context = f.newContext()
            context.insert(Booking(hotel: "\(f.token)-Ritz", room: 1, night: night, guest: "Ann"))
            context.insert(Booking(hotel: "\(f.token)-Ritz", room: 2, night: night, guest: "Bob"))
            try context.save()
            let again = f.newContext()
            again.insert(Booking(hotel: "\(f.token)-Ritz", room: 1, night: night, guest: "Cid"))
            try again.save()
            let all = try f.newContext().fetch(FetchDescriptor<Booking>(sortBy: [SortDescriptor(\.room)]))
            #expect(all.map(\.guest) == ["Cid", "Bob"])
        }
    }

    @Test(arguments: StoreKind.tested)
    func saveIsAllOrNothing(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let context = f.newContext()
            let a = voyage(f, "a", "Paris", day: 1)
            let b = voyage(f, "b", "Rome", day: 2)
            context.insert(a)
            context.insert(b)
            try context.save()

            // Renaming b to a's unique name cannot be merged (it is an update, not an insert) and must fail;
            // the insert in the same save must not be written either.
            b.name = a.name
            let extra = voyage(f, "extra", "Oslo", day: 3)
            context.insert(extra)
            #expect { try context.save() } throws: { ($0 as? PGModelError)?.code == .uniqueViolation }
            #expect(context.hasChanges, "the failed save keeps the changes pending")
            #expect(try f.newContext().fetchCount(FetchDescriptor<Voyage>()) == 2)

            context.rollback()
            #expect(b.name == "\(f.token)-b")
            try context.save()
            #expect(try f.newContext().fetchCount(FetchDescriptor<Voyage>()) == 2)
        }
    }

    @Test(arguments: StoreKind.tested)
    func transactionSavesOrRollsBack(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let context = f.newContext()
            try context.transaction {
                context.insert(voyage(f, "t1", "Kyiv", day: 1))
            }
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try context.transaction {
                    context.insert(voyage(f, "t2", "Kyiv", day: 2))
                    throw Abort()
                }
            }
            #expect(!context.hasChanges)
            #expect(try f.newContext().fetch(FetchDescriptor<Voyage>()).map(\.name) == ["\(f.token)-t1"])
        }
    }

    @Test(arguments: StoreKind.tested)
    func pendingChangesAreIncludedUnlessExcluded(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let context = f.newContext()
            let saved = voyage(f, "saved", "Paris", day: 2)
            let gone = voyage(f, "gone", "Paris", day: 1)
            context.insert(saved)
            context.insert(gone)
            try context.save()

            let fresh = voyage(f, "fresh", "Paris", day: 0)
            context.insert(fresh)
            context.delete(gone)
            saved.destination = "Rome"

            let parisPending = try context.fetch(FetchDescriptor<Voyage>(
                predicate: #Predicate { $0.destination == "Paris" }, sortBy: [SortDescriptor(\.startDate)]))
            #expect(parisPending.map(\.name) == ["\(f.token)-fresh"])
            #expect(try context.fetchCount(FetchDescriptor<Voyage>()) == 2)

            var storedOnly = FetchDescriptor<Voyage>(predicate: #Predicate { $0.destination == "Paris" }, sortBy: [SortDescriptor(\.startDate)])
            storedOnly.includePendingChanges = false
            #expect(try context.fetch(storedOnly).map(\.name) == ["\(f.token)-gone", "\(f.token)-saved"])
        }
    }

    @Test(arguments: StoreKind.tested)
    func fetchesSeeOtherContextsSaves(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let reader = f.newContext(), writer = f.newContext()
            writer.insert(voyage(f, "x", "Lima", day: 1, budget: 10))
            try writer.save()
            let seen = try #require(try reader.fetch(FetchDescriptor<Voyage>()).first)
            let mine = try #require(try writer.fetch(FetchDescriptor<Voyage>()).first)
            mine.budget = 20
            try writer.save()
            _ = try reader.fetch(FetchDescriptor<Voyage>())
            #expect(seen.budget == 20)
        }
    }

    @Test(arguments: StoreKind.tested)
    func unsupportedPredicateThrowsTypedError(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let letters = ["a", "b"]
            let descriptor = FetchDescriptor<Voyage>(predicate: #Predicate { trip in letters.contains { $0 == trip.name } })
            #expect { try f.newContext().fetch(descriptor) } throws: { ($0 as? PGModelError)?.code == .unsupportedPredicate }
        }
    }

    @Test(arguments: StoreKind.tested)
    func readOnlyContainerRefusesToSave(kind: StoreKind) async throws {
        guard kind == .direct else { return }
        let url = try TestDatabase.schemaURL()
        _ = try ModelContainer(for: Voyage.self, configurations: ModelConfiguration(url: url))
        let readOnly = try ModelContainer(for: Voyage.self, configurations: ModelConfiguration(url: url, allowsSave: false))
        let context = ModelContext(readOnly)
        context.insert(Voyage(name: "ro", destination: "X", startDate: base, endDate: base))
        #expect { try context.save() } throws: { ($0 as? PGModelError)?.code == .saveNotAllowed }
    }

    @Test func insertingIntoASecondContextMakesItsSaveThrow() async throws {
        let f = try await StoreFixture.make(.direct, [Voyage.self])
        try await offCooperativePool {
            let first = f.newContext(), second = f.newContext()
            let trip = voyage(f, "twice", "Riga", day: 1)
            first.insert(trip)
            second.insert(trip)
            #expect { try second.save() } throws: { ($0 as? PGModelError)?.code == .invalidField }
            try first.save()
            #expect(try f.newContext().fetchCount(FetchDescriptor<Voyage>()) == 1)
        }
    }
}

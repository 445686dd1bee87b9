import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing
import PGModelTesting

/// Everyday graph edits saved exactly as the app made them, on both stores: appending to an optional
/// to-many, moving children to another parent and deleting the old one in the same save, and the same
/// inside a custom migration stage (the seed's de-duplication).
@Suite("Graph edits: saved as made")
struct GraphEditTests {
    typealias Folder = EditGraph.GraphFolder
    typealias Doc = EditGraph.GraphDoc
    typealias Cover = EditGraph.GraphCover
    typealias Tag = EditGraph.GraphTag
    typealias Note = EditGraph.GraphNote

    func store(_ kind: StoreKind) async throws -> StoreFixture {
        try await StoreFixture.make(kind, EditGraph.models, service: kind == .service ? try await TestService.seeds() : nil)
    }

    @Test("trip.bucketList?.append(item) on an optional to-many is saved, for a new and a saved parent", arguments: StoreKind.tested)
    func appendToOptionalToManyIsSaved(kind: StoreKind) async throws {
        let f = try await store(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let fresh = Folder(name: "\(f.token)-new")
            context.insert(fresh)
            fresh.docs?.append(Doc(title: "\(f.token)-a"))
            try context.save()

            let saved = fresh
            saved.docs?.append(Doc(title: "\(f.token)-b"))
            saved.docs?.insert(Doc(title: "\(f.token)-c"), at: 0)
            try context.save()

            let reader = f.newContext()
            let folders = try reader.fetch(FetchDescriptor<Folder>())
            #expect(folders.count == 1)
            #expect(Set(folders.first?.docs?.map(\.title) ?? []) == ["\(f.token)-a", "\(f.token)-b", "\(f.token)-c"])
            #expect(try reader.fetch(FetchDescriptor<Doc>()).allSatisfy { $0.folder?.name == "\(f.token)-new" })
        }
    }

    @Test("an optional property's default that is not nil is its value until set", arguments: StoreKind.tested)
    func optionalDefaultsAreKept(kind: StoreKind) async throws {
        let f = try await store(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let folder = Folder(name: "\(f.token)")
            let lock = EditGraph.GraphLock(code: "l")
            #expect(folder.docs != nil)
            #expect(lock.hint == "none")
            context.insert(lock)
            try context.save()
            #expect(try f.newContext().fetch(FetchDescriptor<EditGraph.GraphLock>()).map(\.hint) == ["none"])
        }
    }

    @Test("moving children to another parent and deleting the old parent in one save keeps the children", arguments: StoreKind.tested)
    func moveChildrenThenDeleteOldParentInOneSave(kind: StoreKind) async throws {
        let f = try await store(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let keep = Folder(name: "keep"), duplicate = Folder(name: "duplicate")
            context.insert(keep)
            context.insert(duplicate)
            duplicate.docs = [Doc(title: "d1"), Doc(title: "d2")]
            duplicate.cover = Cover(color: "red")
            try context.save()

            // Merge the duplicate into the one kept: its children move over, then it goes (.cascade).
            for doc in duplicate.docs ?? [] { keep.docs?.append(doc) }
            keep.cover = duplicate.cover
            context.delete(duplicate)
            try context.save()

            let reader = f.newContext()
            let folders = try reader.fetch(FetchDescriptor<Folder>())
            #expect(folders.map(\.name) == ["keep"])
            #expect(Set(folders.first?.docs?.map(\.title) ?? []) == ["d1", "d2"])
            #expect(folders.first?.cover?.color == "red")
            #expect(try reader.fetchCount(FetchDescriptor<Doc>()) == 2)
        }
    }

    @Test("a child moved to a parent inserted in the same save, and a deleted unsaved parent's children, follow the graph", arguments: StoreKind.tested)
    func moveToNewParentAndDeleteUnsavedParent(kind: StoreKind) async throws {
        let f = try await store(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let old = Folder(name: "old")
            context.insert(old)
            let moved = Doc(title: "moved")
            old.docs?.append(moved)
            let tag = Tag(label: "tag")
            context.insert(tag)
            try context.save()

            let new = Folder(name: "new")
            context.insert(new)
            moved.folder = new
            context.delete(old)
            // A folder inserted and deleted before any save takes its docs with it (.cascade) and
            // lets go of its tags (.nullify): nothing of it reaches the store.
            let gone = Folder(name: "gone")
            context.insert(gone)
            gone.docs?.append(Doc(title: "never stored"))
            tag.folder = gone
            context.delete(gone)
            try context.save()

            let reader = f.newContext()
            #expect(try reader.fetch(FetchDescriptor<Folder>()).map(\.name) == ["new"])
            #expect(try reader.fetch(FetchDescriptor<Doc>()).map { "\($0.title) in \($0.folder?.name ?? "-")" } == ["moved in new"])
            #expect(try reader.fetch(FetchDescriptor<Tag>()).map { $0.folder == nil } == [true])
            #expect(tag.folder == nil)
        }
    }

    @Test("a note made with its doc in its initializer is in the doc's notes at once and after the save", arguments: StoreKind.tested)
    func relationshipSetInInitializerReachesTheInverse(kind: StoreKind) async throws {
        let f = try await store(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let doc = Doc(title: "doc")
            context.insert(doc)
            try context.save()
            let note = Note(text: "note", doc: doc)
            context.insert(note)
            #expect(doc.notes.map(\.text) == ["note"])
            try context.save()
            let reader = f.newContext()
            #expect(try reader.fetch(FetchDescriptor<Doc>()).first?.notes.map(\.text) == ["note"])
        }
    }

    @Test("a custom migration stage de-duplicates by moving the duplicate's children over and deleting it")
    func migrationStageMovesChildrenAndDeletesDuplicates() async throws {
        let (url, schema) = try await MigrationTests.populatedV1Store()
        let container = try await MigrationTests.open(SampleTripsSchemaV2.self, DeduplicatingPlan.self, at: url)
        let trips = try await offCooperativePool {
            try ModelContext(container).fetch(FetchDescriptor<SampleTripsSchemaV2.Trip>(sortBy: [SortDescriptor(\.startDate)])).map {
                ($0.name, Set(($0.bucketList ?? []).map(\.title)), $0.livingAccommodation?.address)
            }
        }
        #expect(trips.map(\.0) == ["Paris", "Rome", "Oslo", "Lima"])
        // Paris kept its own items, took the duplicate's, and got one more in didMigrate.
        #expect(trips[0].1 == ["see Paris 0", "eat Paris 0", "see Paris 2", "eat Paris 2", "packed in didMigrate"])
        #expect(trips[1].1 == ["see Rome 1", "eat Rome 1", "see Rome 4", "eat Rome 4", "packed in didMigrate"])
        // The duplicate's stay replaced the kept trip's; the replaced one is kept, unlinked (.nullify of a to-one).
        #expect(trips[0].2 == "2 Paris street")
        #expect(try await Inspect.count("SELECT count(*) FROM \(schema).bucket_list_item") == 14)
        #expect(try await Inspect.count("SELECT count(*) FROM \(schema).living_accommodation") == 6)
        await container.close()
        try await Inspect.drop(schema)
    }
}

/// The seed's V1 → V2 stage as the issue's user wrote it: keep the first trip of each name, move the
/// duplicate's items and stay over, delete the duplicate; then append to V2's optional bucket lists.
enum DeduplicatingPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self] }
    static var stages: [MigrationStage] { [migrateV1toV2] }

    static let migrateV1toV2 = MigrationStage.custom(
        fromVersion: SampleTripsSchemaV1.self,
        toVersion: SampleTripsSchemaV2.self,
        willMigrate: { context in
            let trips = try context.fetch(FetchDescriptor<SampleTripsSchemaV1.Trip>(sortBy: [SortDescriptor(\.start_date)]))
            var kept: [String: SampleTripsSchemaV1.Trip] = [:]
            for trip in trips {
                guard let first = kept[trip.name] else {
                    kept[trip.name] = trip
                    continue
                }
                for item in trip.bucketList { item.trip = first }
                if let stay = trip.livingAccommodation { first.livingAccommodation = stay }
                context.delete(trip)
            }
            try context.save()
        },
        didMigrate: { context in
            for trip in try context.fetch(FetchDescriptor<SampleTripsSchemaV2.Trip>()) where ["Paris", "Rome"].contains(trip.name) {
                trip.bucketList?.append(SampleTripsSchemaV2.BucketListItem(title: "packed in didMigrate"))
            }
            try context.save()
        }
    )
}

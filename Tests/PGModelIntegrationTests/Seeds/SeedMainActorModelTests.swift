import Foundation
@_spi(PGModelInternals) import PGModel
import Testing

// The SwiftData skill document's Swift 6 patterns: `@MainActor @Model` classes (a self-referential
// many-to-many `User`, and `Track`), used from the main actor as a SwiftUI app would.

@MainActor
@Model
final class SeedMainActorUser {
    @Attribute(.unique) var id: String
    var name: String
    // Users following this user (inverse relationship)
    @Relationship(deleteRule: .nullify, inverse: \SeedMainActorUser.following)
    var followers: [SeedMainActorUser] = []
    // Users this user is following
    @Relationship(deleteRule: .nullify)
    var following: [SeedMainActorUser] = []

    init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

@MainActor
@Model
final class SeedMainActorTrack {
    var id: String
    var title: String

    init(id: String, title: String) {
        self.id = id
        self.title = title
    }
}

@Suite("Seed: @MainActor models in a container")
@MainActor
struct SeedMainActorModelTests {
    @Test("main-actor models insert, save, fetch, follow and unfollow on the main actor")
    func mainActorModels() throws {
        let container = try ModelContainer(for: SeedMainActorUser.self, SeedMainActorTrack.self,
                                           configurations: ModelConfiguration(url: TestDatabase.schemaURL()))
        let modelContext = container.mainContext
        let user1 = SeedMainActorUser(id: "u1", name: "Ada")
        let user2 = SeedMainActorUser(id: "u2", name: "Grace")
        modelContext.insert(user1)
        modelContext.insert(user2)
        modelContext.insert(SeedMainActorTrack(id: "1", title: "Song"))
        // user1 follows user2 (modifying ONE side)
        user1.following.append(user2)
        try modelContext.save()
        #expect(user2.followers.map(\.id) == ["u1"])

        let fresh = ModelContext(container)
        // Sorted here: Swift 6 makes key paths to a main-actor class's properties non-Sendable, so
        // `SortDescriptor(\.name)` and `#Predicate` over them do not compile for a `@MainActor` model.
        let users = try fresh.fetch(FetchDescriptor<SeedMainActorUser>()).sorted { $0.id < $1.id }
        #expect(users.map(\.name) == ["Ada", "Grace"])
        #expect(users[0].following.map(\.id) == ["u2"])
        #expect(users[1].followers.map(\.id) == ["u1"])
        #expect(try fresh.fetch(FetchDescriptor<SeedMainActorTrack>()).map(\.title) == ["Song"])

        // Unfollowing (remove from ONE side only)
        users[0].following.removeAll { $0.id == "u2" }
        try fresh.save()
        let after = try ModelContext(container).fetch(FetchDescriptor<SeedMainActorUser>()).sorted { $0.id < $1.id }
        #expect(after.map(\.following.count) == [0, 0])
        #expect(after.last?.followers.isEmpty == true)
    }
}

import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import PGModelTesting
import Testing

/// Two service instances on one database, as behind a load balancer: a record's owner is a client of
/// the first, a user it is shared with read-write a client of the second. Conflicts are found in the
/// database, not in an instance, so the same attribute changed through both is a `save_conflict` with
/// exact values and different attributes both stay; and each instance listens for the doorbell itself, so
/// observers connected to the first see a save made through the second.
@Suite("Two service instances on one database")
struct TwoInstancesTests {
    typealias Memo = ConflictModels.EditedMemo

    static func container(_ user: AuthenticatedUser, _ port: Int) async throws -> ModelContainer {
        let url = try ServerRemoteStoreTests.url(user, port: port)
        return try await offCooperativePool { try ModelContainer(for: Schema(ConflictModels.models), configurations: ModelConfiguration(url: url)) }
    }

    @Test func editsConflictMergeAndAreObservedAcrossInstances() async throws {
        let alice = try await ServerTestHarness.makeUser("two_alice")
        let bob = try await ServerTestHarness.makeUser("two_bob")
        let schemaName = TestDatabase.uniqueSchema("two")
        try await ServerTestHarness.register(Schema(ConflictModels.models).schemaDescription, schemaName: schemaName)
        try await ServerTestHarness.withServer(schemaName: schemaName) { first in
            try await ServerTestHarness.withServer(schemaName: schemaName) { second in
                #expect(first != second)
                let ownerContainer = try await Self.container(alice, first)
                let granteeContainer = try await Self.container(bob, second)
                try await offCooperativePool {
                    let owner = ModelContext(ownerContainer)
                    let key = "two-\(UUID().uuidString)"
                    let memo = Memo(key: key, title: "read", body: "body")
                    owner.insert(memo)
                    try owner.share(memo, with: bob.name, permission: .readWrite)
                    try owner.save()

                    // Observers of the owner's container, whose connection is to the first instance.
                    let observer = try ResultsObserver<Memo, Never>(fetchDescriptor: FetchDescriptor(predicate: #Predicate { $0.key == key }),
                                                                   modelContext: ModelContext(ownerContainer))
                    #expect(observer.results.map(\.title) == ["read"])
                    let history = try HistoryObserver(observedModels: [Memo.self], modelContainer: ownerContainer)
                    let counted = history.eventCounter

                    // The grantee, through the second instance, changes the title first.
                    let grantee = ModelContext(granteeContainer)
                    let seen = try #require(try grantee.fetch(FetchDescriptor<Memo>(predicate: #Predicate { $0.key == key })).first)
                    seen.title = "bob"
                    try grantee.save()
                    #expect(waitUntil(reading: { _ = observer.results }, seconds: 30) { observer.results.first?.title == "bob" },
                            "a ResultsObserver on the first instance sees the save made through the second")
                    #expect(waitUntil(reading: { _ = history.eventCounter }, seconds: 30) { history.eventCounter == counted + 1 },
                            "and a HistoryObserver counts it once")

                    // The same attribute through the first instance: refused, with exactly the three values.
                    memo.title = "alice"
                    var thrown: PGModelError?
                    do { try owner.save() } catch let error as PGModelError { thrown = error }
                    #expect(thrown?.code == .saveConflict)
                    #expect(thrown?.conflicts == [SaveConflict(entity: "EditedMemo", id: memo.persistentModelID.uuid, kind: .changed, attributes: [
                        SaveConflict.Attribute(name: "title", mine: .string("alice"), theirs: .string("bob"), ancestor: .string("read")),
                    ])])
                    try owner.refresh(memo, mergeChanges: false)
                    #expect(memo.title == "bob")

                    // Different attributes through the two instances: both stay, and the second saver's
                    // model shows the first one's change when its own save returns.
                    seen.body = "bob's body"
                    try grantee.save()
                    memo.title = "alice"
                    try owner.save()
                    #expect(memo.body == "bob's body")
                    let check = ModelContext(granteeContainer)
                    let stored = try #require(try check.fetch(FetchDescriptor<Memo>(predicate: #Predicate { $0.key == key })).first)
                    #expect(stored.title == "alice" && stored.body == "bob's body")
                    #expect(waitUntil(reading: { _ = history.eventCounter }, seconds: 30) { history.eventCounter == counted + 3 },
                            "every save through either instance is counted once")
                }
            }
        }
    }
}

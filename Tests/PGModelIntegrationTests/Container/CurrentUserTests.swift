import Foundation
@_spi(PGModelInternals) import PGModel
import PGModelTesting
import Testing

/// `ModelContainer.currentUser`: the service user a container logged in as, typed.
@Suite("Current user: who a container is logged in as")
struct CurrentUserTests {
    @Test("a service container reports its user's name, id and admin status; the direct store has none")
    func currentUserOfEachStore() async throws {
        let direct = try await StoreFixture.make(.direct, [Voyage.self])
        #expect(direct.container.currentUser == nil)

        let service = try await TestService.shared()
        let plain = try await StoreFixture.make(.service, [Voyage.self], service: service)
        let user = try #require(plain.container.currentUser)
        #expect(!user.isAdmin)
        #expect(!user.name.isEmpty)
        // Another connection of the same user reports the same identity.
        let again = try await offCooperativePool { try plain.otherProcess() }
        #expect(again.currentUser == user)

        let adminURL = try await service.newUserURL(admin: true)
        let admin = try await offCooperativePool {
            try ModelContainer(for: Voyage.self, configurations: ModelConfiguration(url: adminURL))
        }
        #expect(admin.currentUser?.isAdmin == true)
        #expect(admin.currentUser?.name != user.name)
        #expect(admin.currentUser?.id != user.id)
    }
}

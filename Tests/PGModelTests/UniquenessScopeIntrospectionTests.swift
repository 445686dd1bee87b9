import Foundation
import Testing
@_spi(PGModelInternals) @testable import PGModel

// Uniqueness across all users as the compiled macros declare it: per attribute, per `#Unique` group, and
// through a class hierarchy; Apple's spellings stay per owner.

@Model final class ScopeMember {
    #Unique<ScopeMember>([\.firstName, \.lastName], scope: .allUsers)
    #Unique<ScopeMember>([\.nickname, \.firstName])
    @Attribute(.globallyUnique) var handle: String
    @Attribute(.unique) var nickname: String
    var firstName: String = ""
    var lastName: String = ""
    init(handle: String, nickname: String) {
        self.handle = handle
        self.nickname = nickname
    }
}

@Model class ScopeAccount {
    #Unique<ScopeAccount>([\.email], scope: .allUsers)
    var email: String
    init(email: String) { self.email = email }
}

@Model class ScopePro: ScopeAccount {
    #Unique<ScopePro>([\.studio], scope: .allUsers)
    var studio: String = ""
    init(email: String, studio: String) {
        self.studio = studio
        super.init(email: email)
    }
}

@Suite struct UniquenessScopeIntrospectionTests {
    let schema = Schema([ScopeMember.self, ScopeAccount.self, ScopePro.self])

    @Test func scopesAreListedApartAndAppleSpellingsStayPerOwner() throws {
        let member = try #require(schema.entitiesByName["ScopeMember"])
        #expect(member.uniquenessConstraints == [["nickname", "firstName"], ["nickname"]])
        #expect(member.globalUniquenessConstraints == [["firstName", "lastName"], ["handle"]])
        let handle = try #require(member.attributesByName["handle"])
        #expect(handle.isGloballyUnique && !handle.isUnique)
        #expect(handle.options == [.globallyUnique])
        let nickname = try #require(member.attributesByName["nickname"])
        #expect(nickname.isUnique && !nickname.isGloballyUnique)
        #expect(member.entityDescription.uniquenessConstraints.map(\.scope) == [.owner, .allUsers, .owner, .allUsers])
        #expect(member.entityDescription.attribute(named: "handle")?.isGloballyUnique == true)
    }

    @Test func aSubclassAddsItsGroupsToItsSuperclasses() throws {
        #expect(schema.entitiesByName["ScopeAccount"]?.globalUniquenessConstraints == [["email"]])
        #expect(schema.entitiesByName["ScopePro"]?.globalUniquenessConstraints == [["email"], ["studio"]])
        #expect(schema.entitiesByName["ScopePro"]?.uniquenessConstraints == [])
        #expect(ScopeMember._$globalUniquenessConstraints == [["firstName", "lastName"]])
    }
}

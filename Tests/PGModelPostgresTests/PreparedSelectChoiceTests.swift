import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing
@_spi(PGModelInternals) @testable import PGModelPostgres

/// Which fetches run as named prepared statements: those that can only return a few rows. A point fetch
/// by a unique attribute is one even without a `fetchLimit`, as SwiftData code usually writes it.
@Suite("Prepared select choice")
struct PreparedSelectChoiceTests {
    static let member = EntityDescription(
        name: "Member",
        attributes: [
            AttributeDescription(name: "email", type: .string, isUnique: true),
            AttributeDescription(name: "team", type: .string),
            AttributeDescription(name: "number", type: .int64),
            AttributeDescription(name: "nickname", type: .string, isOptional: true),
        ],
        uniquenessConstraints: [["team", "number"]])

    static func fewRows(_ predicate: QueryExpression?, limit: Int? = nil, identifiers: [UUID]? = nil) -> Bool {
        PostgresStoreEngine.expectsFewRows(
            FetchRequest(entity: "Member", predicate: predicate, limit: limit, identifiers: identifiers), entity: member)
    }

    static func equal(_ key: String, _ value: PGValue) -> QueryExpression {
        .compare(.equal, .key(key), .value(value))
    }

    @Test func aLimitOrIdentifierListOfAtMostAThousandIsFew() {
        #expect(Self.fewRows(nil, limit: 1))
        #expect(Self.fewRows(nil, limit: 1_000))
        #expect(!Self.fewRows(nil, limit: 1_001))
        #expect(Self.fewRows(nil, identifiers: [UUID()]))
        #expect(!Self.fewRows(nil))
    }

    @Test func equalityOnAUniqueAttributeIsFewWithoutALimit() {
        #expect(Self.fewRows(Self.equal("email", .string("a@example.com"))))
        // Either side, and among other conjuncts.
        #expect(Self.fewRows(.compare(.equal, .value(.string("a@example.com")), .key("email"))))
        #expect(Self.fewRows(.and([Self.equal("team", .string("red")), .and([Self.equal("email", .string("a@example.com"))])])))
    }

    @Test func aCompoundConstraintNeedsEveryAttributePinned() {
        #expect(Self.fewRows(.and([Self.equal("team", .string("red")), Self.equal("number", .int(7))])))
        #expect(!Self.fewRows(Self.equal("team", .string("red"))))
        #expect(!Self.fewRows(Self.equal("number", .int(7))))
    }

    @Test func whatDoesNotPinAUniqueValueIsNotFew() {
        // NULL: a uniqueness constraint lets many rows be NULL.
        #expect(!Self.fewRows(Self.equal("email", .null)))
        // Under OR or NOT, or another comparison, the value is not pinned.
        #expect(!Self.fewRows(.or([Self.equal("email", .string("a")), Self.equal("email", .string("b"))])))
        #expect(!Self.fewRows(.not(Self.equal("email", .string("a")))))
        #expect(!Self.fewRows(.compare(.notEqual, .key("email"), .value(.string("a")))))
        #expect(!Self.fewRows(.compare(.greater, .key("email"), .value(.string("a")))))
        // An attribute without a constraint.
        #expect(!Self.fewRows(Self.equal("nickname", .string("ace"))))
    }
}

import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing

/// The migration plan as the stores see it, without a database: default values captured by `@Model`,
/// where a store stands, and the stages that move it.
@Suite("Migration plans")
struct MigrationPlanTests {
    @Model
    final class Defaults {
        var priority: Int = 3
        var label: String = "new"
        var when: Date = Date(timeIntervalSince1970: 1_700_000_000)
        var ratio: Double = 0.5
        var tags: [String] = []
        var note: String? = nil
        var plain: String
        init(plain: String) { self.plain = plain }
    }

    @Test("@Model records each written default value in the schema, in its stored form")
    func defaults() throws {
        let entity = try #require(Schema([Defaults.self]).entity(named: "Defaults")).entityDescription
        func value(_ name: String) -> PGValue? { entity.attribute(named: name)?.defaultValue }
        #expect(value("priority") == .int(3))
        #expect(value("label") == .string("new"))
        #expect(value("when") == .date(Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(value("ratio") == .double(0.5))
        #expect(value("tags") == .string("[]"))
        #expect(value("note") == nil)
        #expect(value("plain") == nil)
        // A default is not part of the shape: changing it alone needs no migration.
        var changed = entity
        changed.attributes[0].defaultValue = .int(4)
        #expect(changed.shape == entity.shape)
        #expect(changed != entity)
    }

    static func schema(_ version: String, _ attributes: [AttributeDescription], unique: [UniquenessConstraintDescription] = []) -> SchemaDescription {
        SchemaDescription(entities: [EntityDescription(name: "Trip", attributes: attributes, uniquenessConstraints: unique)], version: version)
    }

    static let v1 = schema("1.0.0", [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "start_date", type: .date)])
    static let v2 = schema("2.0.0", [AttributeDescription(name: "name", type: .string, isUnique: true),
                                     AttributeDescription(name: "startDate", type: .date, originalName: "start_date")])
    static let v3 = schema("3.0.0", [AttributeDescription(name: "name", type: .string),
                                     AttributeDescription(name: "startDate", type: .date, originalName: "start_date")],
                           unique: [["name", "startDate"]])
    static let plan = MigrationPlanDescription(schemas: [v3, v1, v2], stages: [.init(from: "1.0.0", to: "2.0.0", isCustom: true)])

    @Test("the store's version is the recorded one, else the newest with its shape, else an error listing the differences")
    func storeVersion() throws {
        #expect(try Self.plan.storeVersion(registered: SchemaDescription(entities: []), recorded: nil) == nil)
        #expect(try Self.plan.storeVersion(registered: Self.v1, recorded: nil) == "1.0.0")
        #expect(try Self.plan.storeVersion(registered: Self.v2, recorded: "2.0.0") == "2.0.0")
        // A recorded version whose shape the store no longer has does not count.
        #expect(try Self.plan.storeVersion(registered: Self.v2, recorded: "1.0.0") == "2.0.0")
        let odd = Self.schema("9.9.9", [AttributeDescription(name: "title", type: .string)])
        let error = #expect(throws: PGModelError.self) { try Self.plan.storeVersion(registered: odd, recorded: nil) }
        #expect(error?.code == .unknownSchemaVersion)
        #expect(error?.message.contains("1.0.0: Trip.name is not registered") == true)
    }

    @Test("stages run in order; a gap without a declared stage is lightweight; an older app is refused")
    func path() throws {
        #expect(Self.plan.schemas.map(\.version) == ["1.0.0", "2.0.0", "3.0.0"])
        let stages = try Self.plan.path(from: "1.0.0", to: "3.0.0")
        #expect(stages == [.init(from: "1.0.0", to: "2.0.0", isCustom: true), .init(from: "2.0.0", to: "3.0.0", isCustom: false)])
        #expect(try Self.plan.path(from: "3.0.0", to: "3.0.0").isEmpty)
        let backwards = #expect(throws: PGModelError.self) { try Self.plan.route(registered: Self.v3, recorded: "3.0.0", target: "2.0.0") }
        #expect(backwards?.code == .schemaVersionMismatch)
        #expect(SchemaVersionOrder.less("9.0.0", "10.0.0"))
    }

    @Test("a plan that lists a version twice or a stage to an older version is rejected")
    func validation() {
        let twice = MigrationPlanDescription(schemas: [Self.v1, Self.v1], stages: [])
        #expect(throws: PGModelError.self) { try twice.validate() }
        let backwards = MigrationPlanDescription(schemas: [Self.v1, Self.v2], stages: [.init(from: "2.0.0", to: "1.0.0", isCustom: false)])
        #expect(throws: PGModelError.self) { try backwards.validate() }
    }
}

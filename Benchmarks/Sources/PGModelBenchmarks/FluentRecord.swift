import FluentKit
import Foundation

/// Fluent 4's model of the suite's table, written as a Fluent user would: property wrappers over the
/// same ten columns that `SuiteTable` creates. The schema is chosen per run by the connection's
/// `search_path`, so one model type serves every fresh schema.
final class FluentRecord: Model, @unchecked Sendable {
    // @unchecked: Fluent models are mutable classes by design; each instance stays in one task here.
    static let schema = SuiteTable.name

    @ID(key: .id) var id: UUID?
    @Field(key: "name") var name: String
    @Field(key: "category") var category: String
    @Field(key: "price") var price: Double
    @Field(key: "quantity") var quantity: Int
    @Field(key: "created") var created: Date
    @Field(key: "active") var active: Bool
    @OptionalField(key: "note") var note: String?
    @Field(key: "score") var score: Double
    @Field(key: "rank") var rank: Int

    init() {}

    init(_ row: RecordRow) {
        id = row.id
        name = row.name
        category = row.category
        price = row.price
        quantity = row.quantity
        created = row.created
        active = row.active
        note = row.note
        score = row.score
        rank = row.rank
    }
}

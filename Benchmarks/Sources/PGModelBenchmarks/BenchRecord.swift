import Foundation
@_spi(PGModelInternals) import PGModel

/// The side-by-side suite's model: ten common columns (the id and nine attributes) with an index on
/// `rank`, the column the paged and point workloads look up. The raw, Fluent and `\copy` contenders
/// create the same columns and index by hand (`SuiteTable`).
@Model
final class BenchRecord {
    #Index<BenchRecord>([\.rank])
    var name: String
    var category: String
    var price: Double
    var quantity: Int
    var created: Date
    var active: Bool
    var note: String?
    var score: Double
    var rank: Int

    init(_ row: RecordRow) {
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

import Foundation

/// One row of the side-by-side suite's table, the same for every contender: the raw driver and `\copy`
/// write these values, PGModel and Fluent build their models from them, so each inserts identical data.
///
/// `rank` is a permutation of 0..<count (multiplied by a prime that shares no factor with any size the
/// suite uses), so a range of ranks is scattered over the heap as real data would be, not a run of
/// neighbouring pages that flatters the indexed-range workload.
struct RecordRow: Sendable {
    var id: UUID
    var name: String
    var category: String
    var price: Double
    var quantity: Int
    var created: Date
    var active: Bool
    var note: String?
    var score: Double
    var rank: Int

    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)

    /// Row `i` of `count`, one value at a time: a single literal of all ten defeats the type checker.
    static func row(_ i: Int, of count: Int) -> RecordRow {
        let price: Double = Double(i % 1000) * 0.25 + 0.99
        let created: Date = epoch.addingTimeInterval(Double(i))
        let note: String? = i % 3 == 0 ? nil : "note \(i)"
        let score: Double = Double(i) / 7
        let rank: Int = (i * 7919) % count
        return RecordRow(id: .timeOrdered(), name: "name \(i)", category: "category \(i % 20)", price: price,
                         quantity: i % 500, created: created, active: i % 2 == 0, note: note, score: score, rank: rank)
    }

    static func make(count: Int) -> [RecordRow] {
        precondition(count % 7919 != 0, "rank must stay a permutation")
        return (0..<count).map { i in row(i, of: count) }
    }
}

extension UUID {
    /// A version 7 id, as PGModel makes for its own models: the raw, Fluent and `\copy` contenders use
    /// the same kind, so every primary-key index is filled in time order and none pays for random ids.
    static func timeOrdered() -> UUID {
        let millis = UInt64(Date().timeIntervalSince1970 * 1000)
        var bytes = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for i in 6..<16 { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
        for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: millis >> (8 * (5 - UInt64(i)))) }
        bytes[6] = (bytes[6] & 0x0F) | 0x70
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing
@_spi(PGModelInternals) @testable import PGModel

// SwiftData's `#Index` with kinds, compiled against the real macro declarations: if the overload or
// `Schema.Index<T>.Types<T>` stops type-checking as Apple spells it, this file stops compiling.

@Model class IndexedPlace {
    #Index<IndexedPlace>(.binary([\.name]), .rtree([\.latitude, \.longitude]))
    #Index<IndexedPlace>([\.visitedAt])
    var name: String
    var latitude: Double
    var longitude: Double
    var visitedAt: Date?
    init(name: String, latitude: Double, longitude: Double) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
    }
}

@Model class IndexedCamp: IndexedPlace {
    #Index<IndexedCamp>(.rtree([\.nightlyPrice, \.visitedAt]))
    var nightlyPrice: Decimal = 0
    init(name: String, nightlyPrice: Decimal) {
        self.nightlyPrice = nightlyPrice
        super.init(name: name, latitude: 0, longitude: 0)
    }
}

@Suite("#Index kinds")
struct IndexKindCompileTests {
    @Test func kindsReachTheEntityDescriptionInOrderAndSubclassesInheritThem() throws {
        #expect(IndexedPlace._$indexes == [.binary(["name"]), .rtree(["latitude", "longitude"]), .binary(["visitedAt"])])
        #expect(IndexedCamp._$indexes == IndexedPlace._$indexes + [.rtree(["nightlyPrice", "visitedAt"])])
        let schema = Schema([IndexedCamp.self])
        let place = try #require(schema.entity(named: "IndexedPlace")?.entityDescription)
        #expect(place.indexes == [["name"], IndexDescription(["latitude", "longitude"], kind: .rtree), ["visitedAt"]])
        let camp = try #require(schema.entity(named: "IndexedCamp")?.entityDescription)
        #expect(camp.indexes.last == IndexDescription(["nightlyPrice", "visitedAt"], kind: .rtree))
        try schema.schemaDescription.validate()
    }

    @Test func schemaIndexValuesSpellAppleSignatures() {
        let kinds = Schema.Index<IndexedPlace>(.binary([\.name]), .rtree([\.latitude, \.longitude]))
        #expect(kinds.indices == [.binary([\IndexedPlace.name]), .rtree([\IndexedPlace.latitude, \IndexedPlace.longitude])])
        let binary = Schema.Index<IndexedPlace>([\.name], [\.latitude, \.longitude])
        #expect(binary.indices == [.binary([\IndexedPlace.name]), .binary([\IndexedPlace.latitude, \IndexedPlace.longitude])])
        let spelled: Schema.Index<IndexedPlace>.Types<IndexedPlace> = .rtree([\.visitedAt])
        #expect(spelled != .binary([\.visitedAt]))
    }
}

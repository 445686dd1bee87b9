import Foundation
@_spi(PGModelInternals) import PGModel
import Testing
import PGModelTesting

/// A type PGModel cannot store by itself (not Codable), stored through a transformer.
final class Hue: @unchecked Sendable {
    let degrees: Int
    init(degrees: Int) { self.degrees = degrees }
}

final class HueTransformer: ValueTransformer {
    // As transformers written for Apple's Foundation declare it; PGModel stores Data regardless.
    override class func transformedValueClass() -> AnyClass { NSData.self }
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? {
        (value as? Hue).map { Data(String($0.degrees).utf8) }
    }
    override func reverseTransformedValue(_ value: Any?) -> Any? {
        (value as? Data).flatMap { Int(String(decoding: $0, as: UTF8.self)) }.map(Hue.init(degrees:))
    }
}

/// An identifier type the app does not own (like `MKMapItem.Identifier`): Codable, stored opaquely.
struct ExternalIdentifier: Codable, Hashable {
    var rawValue: String
}

/// The "What's new" seed's `Trip` with a Codable `Location`, plus every other rich attribute kind.
@Model final class Excursion {
    struct Location: Codable, Hashable {
        var latitude: Double
        var longitude: Double
    }

    enum Transport: Codable, Hashable {
        case walk
        case train(line: String)
        case flight(number: String, stops: Int)
    }

    var name: String
    var location: Location?
    var transport: Transport = Transport.walk
    var tags: [String] = []
    var scores: [Int] = []
    @Attribute(.codable) var mapItemIdentifier: ExternalIdentifier?
    @Attribute(.externalStorage) var photo: Data = Data()
    @Attribute(.ephemeral) var isSelected: Bool = false
    @Attribute(.transformable(by: HueTransformer.self)) var hue: Hue?

    init(name: String, location: Location? = nil, tags: [String] = [], scores: [Int] = []) {
        self.name = name
        self.location = location
        self.tags = tags
        self.scores = scores
    }
}

@Suite("Rich attributes: Codable documents, arrays, .codable, .externalStorage, .ephemeral, .transformable")
struct RichAttributeTests {
    @Test(arguments: StoreKind.tested)
    func everyKindRoundTripsAndFieldsWorkInPredicates(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Excursion.self])
        try await offCooperativePool {
            let writer = f.newContext()
            let oslo = Excursion(name: "\(f.token)-oslo", location: .init(latitude: 59.9, longitude: 10.7), tags: ["fjord", "city"], scores: [3, 5])
            oslo.transport = .flight(number: "SK 1", stops: 0)
            oslo.mapItemIdentifier = ExternalIdentifier(rawValue: "I6A0B")
            oslo.photo = Data(repeating: 7, count: 100_000)
            oslo.hue = Hue(degrees: 210)
            oslo.isSelected = true
            let rome = Excursion(name: "\(f.token)-rome", location: .init(latitude: 41.9, longitude: 12.5), tags: ["city"])
            rome.transport = .train(line: "Frecciarossa")
            let nowhere = Excursion(name: "\(f.token)-nowhere")
            [oslo, rome, nowhere].forEach(writer.insert)
            try writer.save()

            let reader = f.newContext()
            let all = try reader.fetch(FetchDescriptor<Excursion>(sortBy: [SortDescriptor(\.name)]))
            #expect(all.map(\.name) == ["\(f.token)-nowhere", "\(f.token)-oslo", "\(f.token)-rome"])
            let fetched = all[1]
            #expect(fetched.location == .init(latitude: 59.9, longitude: 10.7))
            #expect(fetched.transport == .flight(number: "SK 1", stops: 0))
            #expect(fetched.tags == ["fjord", "city"] && fetched.scores == [3, 5])
            #expect(fetched.mapItemIdentifier == ExternalIdentifier(rawValue: "I6A0B"))
            #expect(fetched.hue?.degrees == 210)
            #expect(fetched.isSelected == false) // .ephemeral: never stored
            #expect(all[0].location == nil && all[0].hue == nil)
            // .externalStorage: not read with the row, loaded on first access.
            #expect(fetched.photo.count == 100_000)

            let north = #Predicate<Excursion> { ($0.location?.latitude ?? 0) > 50 }
            let cities = #Predicate<Excursion> { $0.tags.contains("city") }
            let placed = #Predicate<Excursion> { $0.location != nil }
            for predicate in [north, cities, placed] {
                let expected = Set(try all.filter { try predicate.evaluate($0) }.map(\.name))
                #expect(Set(try reader.fetch(FetchDescriptor(predicate: predicate)).map(\.name)) == expected)
            }
            #expect(try reader.fetch(FetchDescriptor(predicate: north)).map(\.name) == ["\(f.token)-oslo"])
            // Sorting by a field of a Codable attribute; no document sorts first, as nil does in Swift.
            let byLatitude = try reader.fetch(FetchDescriptor<Excursion>(sortBy: [SortDescriptor(\Excursion.location?.latitude, order: .reverse)]))
            #expect(byLatitude.map(\.name) == ["\(f.token)-oslo", "\(f.token)-rome", "\(f.token)-nowhere"])

            let opaque = ExternalIdentifier(rawValue: "I6A0B")
            let error = try #require(throws: PGModelError.self) {
                try reader.fetch(FetchDescriptor<Excursion>(predicate: #Predicate { $0.mapItemIdentifier == opaque }))
            }
            #expect(error.code == .unsupportedPredicate)
        }
    }
}

import Foundation
@_spi(PGModelInternals) import PGModel
import Testing
import PGModelTesting

/// Every supported predicate construct must select in PostgreSQL exactly the rows that
/// `Predicate.evaluate` selects in Swift over the same data.
@Suite("Predicate parity: SQL vs Predicate.evaluate")
struct PredicateParityTests {
    static let base = Date(timeIntervalSince1970: 1_750_000_000)

    static func dataset(_ token: String) -> [Voyage] {
        let destinations = ["Paris", "paris", "Páris", "Rome", "Oslo", "São Paulo", "100% Pure", "under_score", ""]
        return destinations.enumerated().flatMap { index, destination in
            (0..<2).map { j in
                let n = index * 2 + j
                return Voyage(name: "\(token)-\(n)", destination: destination,
                              startDate: base + Double(n) * 86_400, endDate: base + Double(n + j + 1) * 86_400,
                              budget: Double(n * 250) + 0.5, travelers: n % 5,
                              kind: TripKind.allCases[n % 3], notes: n % 3 == 0 ? nil : "note \(n % 4)")
            }
        }
    }

    struct Case: CustomTestStringConvertible, @unchecked Sendable {
        let name: String
        let predicate: Predicate<Voyage>
        var testDescription: String { name }
    }

    static let cases: [Case] = {
        let paris = "Paris"
        let cutoff = base + 5 * 86_400
        let noNotes: String? = nil
        let kinds = [TripKind.business, .family]
        let wanted = ["Rome", "Oslo", "nowhere"]
        let search = "PARIS"
        let vacation = TripKind.vacation
        let same = ComparisonResult.orderedSame
        let ascending = ComparisonResult.orderedAscending
        // One statement per case: a single literal of them all takes the type checker too long.
        var all: [Case] = []
        all.append(Case(name: "==", predicate: #Predicate { $0.destination == paris }))
        all.append(Case(name: "!=", predicate: #Predicate { $0.destination != paris }))
        all.append(Case(name: "< on Date", predicate: #Predicate { $0.startDate < cutoff }))
        all.append(Case(name: ">= on Double", predicate: #Predicate { $0.budget >= 1000.5 }))
        all.append(Case(name: "<= on Int", predicate: #Predicate { $0.travelers <= 2 }))
        all.append(Case(name: "> on Int", predicate: #Predicate { $0.travelers > 3 }))
        all.append(Case(name: "&& ||", predicate: #Predicate { ($0.travelers == 1 || $0.travelers == 4) && $0.budget > 500 }))
        all.append(Case(name: "!", predicate: #Predicate { !($0.travelers == 1) }))
        all.append(Case(name: "== nil", predicate: #Predicate { $0.notes == nil }))
        all.append(Case(name: "!= nil", predicate: #Predicate { $0.notes != nil }))
        all.append(Case(name: "== captured nil", predicate: #Predicate { $0.notes == noNotes }))
        all.append(Case(name: "optional == value", predicate: #Predicate { $0.notes == "note 1" }))
        all.append(Case(name: "arithmetic", predicate: #Predicate { $0.travelers * 2 + 1 > 5 }))
        all.append(Case(name: "remainder", predicate: #Predicate { $0.travelers % 2 == 0 }))
        all.append(Case(name: "double arithmetic", predicate: #Predicate { $0.budget / 2 - 100 > 400 }))
        all.append(Case(name: "Bool key path", predicate: #Predicate { $0.isFavorite }))
        all.append(Case(name: "negated Bool", predicate: #Predicate { !$0.isFavorite }))
        all.append(Case(name: "ternary", predicate: #Predicate { ($0.travelers > 2 ? $0.budget : 0) > 1000 }))
        all.append(Case(name: "contains", predicate: #Predicate { $0.destination.contains("ar") }))
        all.append(Case(name: "contains % literally", predicate: #Predicate { $0.destination.contains("%") }))
        all.append(Case(name: "contains _ literally", predicate: #Predicate { $0.destination.contains("_") }))
        all.append(Case(name: "starts(with:)", predicate: #Predicate { $0.destination.starts(with: "Pa") }))
        all.append(Case(name: "localizedStandardContains", predicate: #Predicate { $0.destination.localizedStandardContains(search) }))
        all.append(Case(name: "caseInsensitiveCompare", predicate: #Predicate { $0.destination.caseInsensitiveCompare("paris") == same }))
        all.append(Case(name: "caseInsensitiveCompare ascending", predicate: #Predicate { $0.destination.caseInsensitiveCompare("p") == ascending }))
        all.append(Case(name: "localizedCompare", predicate: #Predicate { $0.destination.localizedCompare("Paris") == same }))
        all.append(Case(name: "localizedCompare ascending", predicate: #Predicate { $0.destination.localizedCompare("P") == ascending }))
        all.append(Case(name: "captured array contains", predicate: #Predicate { wanted.contains($0.destination) }))
        all.append(Case(name: "enum ==", predicate: #Predicate { $0.kind == vacation }))
        all.append(Case(name: "enum in captured array", predicate: #Predicate { kinds.contains($0.kind) }))
        all.append(Case(name: "?? on optional", predicate: #Predicate { ($0.notes ?? "none") == "none" }))
        all.append(Case(name: "always true", predicate: #Predicate { _ in true }))
        return all
    }()

    @Test(arguments: StoreKind.tested)
    func everyConstructSelectsTheSameRows(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [Voyage.self])
        try await offCooperativePool {
            let writer = f.newContext()
            let data = Self.dataset(f.token)
            data.enumerated().forEach { $1.isFavorite = $0 % 4 == 0; writer.insert($1) }
            try writer.save()

            let reader = f.newContext()
            let all = try reader.fetch(FetchDescriptor<Voyage>())
            #expect(all.count == data.count)
            for c in Self.cases {
                let expected = Set(try all.filter { try c.predicate.evaluate($0) }.map(\.name))
                let actual = try reader.fetch(FetchDescriptor<Voyage>(predicate: c.predicate)).map(\.name)
                #expect(Set(actual) == expected, "\(c.name)")
                #expect(actual.count == expected.count, "\(c.name): no duplicates")
                #expect(try reader.fetchCount(FetchDescriptor<Voyage>(predicate: c.predicate)) == expected.count, "\(c.name) count")
            }
        }
    }
}

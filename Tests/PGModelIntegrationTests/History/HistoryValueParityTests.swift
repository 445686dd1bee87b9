import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import PostgresNIO
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// Values round-trip exactly on either store, and history records them the same way whichever store
/// wrote them: the service's wire must not turn a double into another double, nor a date into
/// another instant, on the way to the same engine.
@Suite("History and values: the same from either store")
struct HistoryValueParityTests {
    @Model final class ParityReading {
        var label: String
        var value: Double
        var taken: Date
        init(label: String, value: Double, taken: Date) {
            self.label = label
            self.value = value
            self.taken = taken
        }
    }

    /// Doubles a JSON round trip can get wrong: shortest forms, integral ones (tagged on the wire), past
    /// 2^53, the extremes, a subnormal, and negative zero.
    static let doubles: [Double] = [
        0.1, 1.0 / 3.0, 1.0, -2.0, 1e15, 123_456_789.125, 9_007_199_254_740_994, 1e300, -1e-300,
        .leastNonzeroMagnitude, .greatestFiniteMagnitude, -0.0, 0.0,
    ]
    static let taken = Date(timeIntervalSince1970: 1_700_000_000.123456)

    /// Saves one reading per double, then changes each to the next double, on `kind`; returns what the
    /// store gives back and the history JSON of each update, by label.
    func roundTrip(_ kind: StoreKind) async throws -> (values: [String: UInt64], history: [String: String]) {
        let f = try await StoreFixture.make(kind, [ParityReading.self])
        let token = f.token
        let ids: [String: UUID] = try await offCooperativePool {
            let context = f.newContext()
            let readings = Self.doubles.indices.map { ParityReading(label: "\(token)-\($0)", value: 7.5, taken: Self.taken) }
            readings.forEach(context.insert)
            try context.save()
            for (i, reading) in readings.enumerated() { reading.value = Self.doubles[i] }
            try context.save()
            var ids: [String: UUID] = [:]
            for reading in readings { ids[reading.label] = reading.persistentModelID.uuid }
            return ids
        }
        let values: [String: UInt64] = try await offCooperativePool {
            let fresh = f.newContext()
            var values: [String: UInt64] = [:]
            for reading in try fresh.fetch(FetchDescriptor<ParityReading>()) where reading.label.hasPrefix(token) {
                #expect(reading.taken == Self.taken, "\(kind): \(reading.taken.timeIntervalSince1970)")
                values[String(reading.label.dropFirst(token.count + 1))] = reading.value.bitPattern
            }
            return values
        }
        var history: [String: String] = [:]
        let connection = try await EngineTestStore.connect(logger: .init(label: "pgmodel.test.parity"))
        do {
            for (label, id) in ids {
                let rows = try await connection.query(
                    "SELECT new_values::text FROM pgmodel.changes WHERE row_id = \(id) AND kind = 'update'",
                    logger: .init(label: "pgmodel.test.parity"))
                for try await json in rows.decode(String.self) {
                    history[String(label.dropFirst(token.count + 1))] = json
                }
            }
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
        return (values, history)
    }

    @Test("each double comes back bit for bit, and its history JSON is the same text from both stores")
    func doublesAndHistoryMatch() async throws {
        let direct = try await roundTrip(.direct)
        let service = try await roundTrip(.service)
        for (i, double) in Self.doubles.enumerated() {
            let label = "\(i)"
            #expect(direct.values[label] == double.bitPattern, "direct store: \(double)")
            #expect(service.values[label] == double.bitPattern, "service: \(double)")
            #expect(direct.history[label] != nil, "direct store: no history of \(double)")
            #expect(direct.history[label] == service.history[label], "history of \(double)")
        }
    }
}

import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PGModel
import PGModelTesting
import Testing
import TripsAPI

/// Every route of the TripsAPI example over real HTTP: HummingbirdTesting's `.live` framework starts the
/// application's server on a free port and a client sends it real requests over a socket; the store is a
/// real PostgreSQL (`PGMODEL_TEST_DATABASE_URL`, or a private cluster), in a schema of the test's own.
@Suite("TripsAPI over HTTP")
struct TripsAPIRoutesTests {
    /// A container on a fresh schema, and the application over it on port 0. The container registers its
    /// schema before the application starts: the test client gives up on a request after a fixed read
    /// timeout, and the first request would otherwise also wait for the schema's DDL behind every other
    /// suite creating and dropping schemas on the same database.
    static func makeApplication() async throws -> (container: ModelContainer, app: some ApplicationProtocol) {
        let url = try PGModelTestDatabase.url(schemaName: PGModelTestDatabase.uniqueSchemaName("tripsapi"))
        let container = try TripsAPIApp.makeContainer(url: url)
        _ = try await ModelContext(container).fetchCountAsync(FetchDescriptor<Trip>())
        var logger = Logger(label: "TripsAPITests")
        logger.logLevel = .warning
        return (container, TripsAPIApp.makeApplication(container: container, host: "127.0.0.1", port: 0, logger: logger))
    }

    static func json(_ object: [String: Any]) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object))
    }

    static func decode<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(T.self, from: Data(response.body.readableBytesView))
    }

    /// ``decode(_:_:)`` for `#expect`, which cannot take a throwing expression here: nil (and a recorded
    /// issue) when the body is not a `T`.
    static func decoded<T: Decodable>(_ type: T.Type, _ response: TestResponse) -> T? {
        do {
            return try decode(type, response)
        } catch {
            Issue.record("the body is not a \(T.self): \(error)")
            return nil
        }
    }

    /// The `code` of an error answer's body.
    static func errorCode(_ response: TestResponse) -> String? {
        let object = try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
        return (object?["error"] as? [String: Any])?["code"] as? String
    }

    static let headers: HTTPFields = [.contentType: "application/json"]

    static func trip(_ name: String, _ destination: String, start: String, end: String, budget: Double) -> [String: Any] {
        ["name": name, "destination": destination, "startDate": start, "endDate": end, "budget": budget]
    }

    @Test("create, get, list with a filter, update and delete, with the statuses of each outcome")
    func everyRoute() async throws {
        let (container, app) = try await Self.makeApplication()
        try await app.test(.live) { client in
            // POST: 201 with the trip and its Location.
            let paris = try await client.execute(uri: "/trips", method: .post, headers: Self.headers,
                                                 body: try Self.json(Self.trip("Spring in Paris", "Paris", start: "2027-04-01T00:00:00Z",
                                                                               end: "2027-04-08T00:00:00Z", budget: 1200))) { response in
                #expect(response.status == .created)
                let trip = try Self.decode(TripOutput.self, response)
                #expect(response.headers[.location] == "/trips/\(trip.id)")
                #expect(trip.name == "Spring in Paris")
                #expect(trip.budget == 1200)
                return trip
            }
            let id = paris.id
            for (name, destination, start) in [("Roman holiday", "Rome", "2027-05-01T00:00:00Z"),
                                               ("Paris in autumn", "Paris", "2027-10-01T00:00:00Z"),
                                               ("Lyon weekend", "Lyon", "2027-06-01T00:00:00Z")] {
                try await client.execute(uri: "/trips", method: .post, headers: Self.headers,
                                         body: try Self.json(Self.trip(name, destination, start: start, end: start, budget: 500))) { response in
                    #expect(response.status == .created)
                }
            }
            // A second trip of the same name: the unique constraint, 409.
            try await client.execute(uri: "/trips", method: .post, headers: Self.headers,
                                     body: try Self.json(Self.trip("Spring in Paris", "Nice", start: "2027-04-01T00:00:00Z",
                                                                   end: "2027-04-02T00:00:00Z", budget: 1))) { response in
                #expect(response.status == .conflict)
                #expect(Self.errorCode(response) == "unique_violation")
            }

            // GET by id: 200; a missing id 404; an id that is not a UUID 400.
            try await client.execute(uri: "/trips/\(id)", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Self.decoded(TripOutput.self, response) == paris)
            }
            try await client.execute(uri: "/trips/\(UUID().uuidString.lowercased())", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(Self.errorCode(response) == "not_found")
            }
            try await client.execute(uri: "/trips/not-a-uuid", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(Self.errorCode(response) == "invalid_id")
            }

            // GET the list: everything by start date; filtered by #Predicate on destination and name.
            try await client.execute(uri: "/trips", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Self.decoded(TripList.self, response)?.trips.map(\.name)
                    == ["Spring in Paris", "Roman holiday", "Lyon weekend", "Paris in autumn"])
            }
            try await client.execute(uri: "/trips?destination=Paris", method: .get) { response in
                #expect(Self.decoded(TripList.self, response)?.trips.map(\.name) == ["Spring in Paris", "Paris in autumn"])
            }
            try await client.execute(uri: "/trips?search=AUTUMN", method: .get) { response in
                #expect(Self.decoded(TripList.self, response)?.trips.map(\.name) == ["Paris in autumn"])
            }
            try await client.execute(uri: "/trips?destination=Paris&search=spring", method: .get) { response in
                #expect(Self.decoded(TripList.self, response)?.trips.map(\.name) == ["Spring in Paris"])
            }
            try await client.execute(uri: "/trips?limit=2&offset=1", method: .get) { response in
                #expect(Self.decoded(TripList.self, response)?.trips.map(\.name) == ["Roman holiday", "Lyon weekend"])
            }
            for query in ["limit=0", "limit=abc", "limit=100000", "offset=-1"] {
                try await client.execute(uri: "/trips?\(query)", method: .get) { response in
                    #expect(response.status == .badRequest, "\(query)")
                    #expect(Self.errorCode(response) == "invalid_input")
                }
            }

            // PATCH: 200 with the changed trip; only the fields given change.
            try await client.execute(uri: "/trips/\(id)", method: .patch, headers: Self.headers,
                                     body: try Self.json(["budget": 1500, "destination": "Paris 11e"])) { response in
                #expect(response.status == .ok)
                let trip = try Self.decode(TripOutput.self, response)
                #expect(trip.budget == 1500)
                #expect(trip.destination == "Paris 11e")
                #expect(trip.name == "Spring in Paris")
            }
            try await client.execute(uri: "/trips/\(id)", method: .get) { response in
                #expect(Self.decoded(TripOutput.self, response)?.budget == 1500)
            }
            // A taken name: 409; invalid values and bodies: 400, and nothing changes.
            try await client.execute(uri: "/trips/\(id)", method: .patch, headers: Self.headers,
                                     body: try Self.json(["name": "Roman holiday"])) { response in
                #expect(response.status == .conflict)
                #expect(Self.errorCode(response) == "unique_violation")
            }
            try await client.execute(uri: "/trips/\(id)", method: .patch, headers: Self.headers,
                                     body: try Self.json(["endDate": "2020-01-01T00:00:00Z"])) { response in
                #expect(response.status == .badRequest)
                #expect(Self.errorCode(response) == "invalid_input")
            }
            try await client.execute(uri: "/trips/\(id)", method: .patch, headers: Self.headers,
                                     body: try Self.json(["budget": "a lot"])) { response in
                #expect(response.status == .badRequest)
                #expect(Self.errorCode(response) == "invalid_input")
            }
            try await client.execute(uri: "/trips/\(id)", method: .patch, headers: Self.headers,
                                     body: ByteBuffer(string: "{not json")) { response in
                #expect(response.status == .badRequest)
                #expect(Self.errorCode(response) == "invalid_input")
            }
            try await client.execute(uri: "/trips/\(UUID().uuidString)", method: .patch, headers: Self.headers,
                                     body: try Self.json(["budget": 1])) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/trips/\(id)", method: .get) { response in
                let trip = try Self.decode(TripOutput.self, response)
                #expect(trip.name == "Spring in Paris")
                #expect(trip.budget == 1500)
            }

            // POST with bad input: 400 naming the field.
            try await client.execute(uri: "/trips", method: .post, headers: Self.headers,
                                     body: try Self.json(["name": "No dates", "destination": "Oslo"])) { response in
                #expect(response.status == .badRequest)
                #expect(Self.errorCode(response) == "invalid_input")
                #expect(String(buffer: response.body).contains("startDate"))
            }
            try await client.execute(uri: "/trips", method: .post, headers: Self.headers,
                                     body: try Self.json(Self.trip("  ", "Oslo", start: "2027-01-01T00:00:00Z",
                                                                   end: "2027-01-02T00:00:00Z", budget: 1))) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: "/trips", method: .post, headers: Self.headers,
                                     body: try Self.json(Self.trip("Minus", "Oslo", start: "2027-01-01T00:00:00Z",
                                                                   end: "2027-01-02T00:00:00Z", budget: -5))) { response in
                #expect(response.status == .badRequest)
            }

            // DELETE: 204, then 404 for it and for a missing id.
            try await client.execute(uri: "/trips/\(id)", method: .delete) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/trips/\(id)", method: .get) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/trips/\(id)", method: .delete) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/trips?destination=Paris", method: .get) { response in
                #expect(Self.decoded(TripList.self, response)?.trips.map(\.name) == ["Paris in autumn"])
            }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
            }
            // A body over the limit: 413. Last, as the server may close a connection whose body it did not read.
            try await client.execute(uri: "/trips", method: .post, headers: Self.headers,
                                     body: ByteBuffer(string: "{\"name\":\"" + String(repeating: "x", count: 70_000) + "\"}")) { response in
                #expect(response.status == .contentTooLarge)
            }
        }
        // The application's ServiceGroup shut down when the test ended: the container is closed.
        let error = await #expect(throws: PGModelError.self) {
            _ = try await ModelContext(container).fetchCountAsync(FetchDescriptor<Trip>())
        }
        #expect(error?.code == .connectionFailed)
    }

    @Test("concurrent requests each get their own context: every create lands, none sees another's pending insert")
    func concurrentRequests() async throws {
        let (_, app) = try await Self.makeApplication()
        try await app.test(.live) { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        let start = "2027-0\(1 + index % 9)-01T00:00:00Z"
                        try await client.execute(uri: "/trips", method: .post, headers: Self.headers,
                                                 body: try Self.json(Self.trip("Trip \(index)", "City\(index % 4)", start: start,
                                                                               end: start, budget: Double(index)))) { response in
                            #expect(response.status == .created)
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await client.execute(uri: "/trips?destination=City1", method: .get) { response in
                #expect(Self.decoded(TripList.self, response)?.trips.count == 4)
            }
            try await client.execute(uri: "/trips", method: .get) { response in
                #expect(Self.decoded(TripList.self, response)?.trips.count == 16)
            }
        }
    }
}

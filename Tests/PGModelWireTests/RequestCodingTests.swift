import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelCore
import PGModelTestSupport
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

@Suite("Request encoding and decoding")
struct RequestCodingTests {
    static let schema = SchemaDescription(entities: [
        EntityDescription(
            name: "Trip",
            attributes: [
                AttributeDescription(name: "name", type: .string, isUnique: true),
                AttributeDescription(name: "startDate", type: .date),
                AttributeDescription(name: "perdiem", type: .double, isOptional: true),
            ],
            indexes: [["startDate"]]),
    ])

    static let fetch = FetchRequest(
        entity: "Trip",
        predicate: .and([
            .compare(.equal, .key("destination"), .value(.string("Paris"))),
            .not(.in(.key("name"), [.string("a"), .null])),
            .string(.localizedStandardContains, .key("name"), .value(.string("x"))),
        ]),
        sort: [SortKey("startDate"), SortKey("name", ascending: false)],
        limit: 10,
        offset: 5,
        identifiers: [WireTest.tripID, WireTest.otherID])

    static let save = SaveRequest(
        inserts: [
            RowValues(
                entity: "Trip", id: WireTest.tripID,
                values: [
                    "name": .string("Paris"), "perdiem": .double(120.5), "nights": .int(3),
                    "startDate": .date(Date(timeIntervalSince1970: 1_714_557_600)), "fee": .decimal(Decimal(string: "12.50") ?? 0),
                    "photo": .data(Data([1, 2, 3])), "ref": .uuid(WireTest.otherID), "note": .null, "done": .bool(false),
                ]),
        ],
        updates: [RowValues(entity: "Trip", id: WireTest.otherID, values: ["perdiem": .double(3)])],
        deletes: [RowReference(entity: "Trip", id: WireTest.otherID)],
        author: "importer")

    static let everyOperation: [Request.Operation] = [
        .hello(HelloPayload(user: "alice", password: "s3cret")),
        .ping,
        .register(schema),
        .migrate(schema, MigrationPlanDescription(
            schemas: [SchemaDescription(entities: [], version: "0.9.0"), schema],
            stages: [.init(from: "0.9.0", to: schema.version, isCustom: false)])),
        .fetch(fetch),
        .count(FetchRequest(entity: "Trip")),
        .count(FetchRequest(entity: "Trip", ownership: .owned)),
        .fetch(FetchRequest(entity: "Trip", limit: 3, ownership: .sharedWithMe)),
        .ids(fetch),
        .save(save),
        .save(SaveRequest()),
        .history(HistoryRequest(filter: .token(.greater, 7), limit: 5)),
        .deleteHistory(HistoryRequest(filter: .all)),
        .subscribe(entities: nil),
        .unsubscribe(subscription: 3),
        .save(SaveRequest(
            links: [LinkChange(entity: "User", relationship: "following", source: WireTest.tripID, destination: WireTest.otherID, isAdded: true)],
            batchDeletes: [FetchRequest(entity: "Track", predicate: .aggregate(Aggregate(.any, relationship: "tags",
                predicate: .compare(.equal, .key("name"), .value(.string("x"))))))])),
        .fetch(FetchRequest(entity: "Track", predicate: .and([.isKind("LiveTrack"), .compare(.equal, .key("album.title"), .value(.string("X")))]),
                            related: RelatedScope(entity: "Album", relationship: "tracks", ids: [WireTest.tripID]), properties: ["title"])),
        .bye,
        .save(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Trip", id: WireTest.tripID), user: "bob", permission: .readWrite),
                                   ShareChange(record: RowReference(entity: "Trip", id: WireTest.tripID), user: "carol", permission: nil)])),
        .share(ShareChange(record: RowReference(entity: "Trip", id: WireTest.tripID), user: "bob", permission: .readOnly)),
        .unshare(ShareChange(record: RowReference(entity: "Trip", id: WireTest.tripID), user: "bob", permission: nil)),
        .shares(RowReference(entity: "Trip", id: WireTest.tripID)),
    ]

    private func code(_ result: Result<Request, RequestDecodingFailure>) -> PGModelError.Code? {
        if case .failure(let failure) = result { return failure.error.code }
        return nil
    }

    @Test("readAfter: a read's commit position, written in key order, read alike by both decoders, refused unless an LSN")
    func readAfterField() throws {
        var request = Request(id: 9, operation: .fetch(FetchRequest(entity: "Trip", limit: 2)))
        request.readAfter = LogSequenceNumber("0/16B3748")
        let line = try WireTest.text(request.encodedLine())
        #expect(line == #"{"entity":"Trip","id":9,"limit":2,"op":"fetch","readAfter":"0/16B3748"}"#)
        #expect(RequestFastDecoder.decode(Data(line.utf8)) == request)
        #expect(try Request.decode(line: Data(line.utf8)).get() == request)
        var count = Request(id: 10, operation: .count(FetchRequest(entity: "Trip")))
        count.readAfter = LogSequenceNumber("A/0")
        #expect(try Request.decode(line: count.encodedLine()).get() == count)
        for bad in [#""0x16""#, #""16B3748""#, #""1/2/3""#, "12", #""123456789/0""#] {
            let decoded = Request.decode(line: Data(#"{"id":11,"op":"fetch","entity":"Trip","readAfter":\#(bad)}"#.utf8))
            #expect(code(decoded) == .invalidField, "\(bad)")
        }
        let null = Request.decode(line: Data(#"{"id":12,"op":"fetch","entity":"Trip","readAfter":null}"#.utf8))
        #expect(try null.get().readAfter == nil)
    }

    @Test("share lines: the record is entity and rowID (id is the request's); a share needs a permission")
    func shareLines() throws {
        let line = try WireTest.text(Request(id: 3, operation: .share(ShareChange(
            record: RowReference(entity: "Trip", id: WireTest.tripID), user: "bob", permission: .readOnly))).encodedLine())
        #expect(line == #"{"entity":"Trip","id":3,"op":"share","permission":"readOnly","rowID":"\#(WireTest.tripID.uuidString.lowercased())","user":"bob"}"#)
        let missing = Request.decode(line: Data(#"{"id":4,"op":"share","entity":"Trip","rowID":"\#(WireTest.tripID.uuidString)","user":"bob"}"#.utf8))
        #expect(code(missing) == .missingField)
        let badUser = Request.decode(line: Data(#"{"id":5,"op":"unshare","entity":"Trip","rowID":"\#(WireTest.tripID.uuidString)","user":""}"#.utf8))
        #expect(code(badUser) == .invalidField)
        let badID = Request.decode(line: Data(#"{"id":6,"op":"shares","entity":"Trip","rowID":"'; DROP TABLE x; --"}"#.utf8))
        #expect(code(badID) == .invalidField)
        let badPermission = Request.decode(line: Data(#"{"id":7,"op":"share","entity":"Trip","rowID":"\#(WireTest.tripID.uuidString)","user":"bob","permission":"owner"}"#.utf8))
        #expect(code(badPermission) == .invalidField)
    }

    @Test("register: an index is an array of names (binary, the original form) or an object with its kind")
    func registerIndexKinds() throws {
        let attributes = #"[{"name":"name","columnName":"name","type":"string"},{"name":"latitude","columnName":"latitude","type":"double"},"#
            + #"{"name":"longitude","columnName":"longitude","type":"double"}]"#
        // What clients sent before index kinds existed, the Python example among them.
        let old = try WireTest.decode(#"{"id":1,"op":"register","schema":{"version":"1.0.0","entities":[{"name":"Trip","tableName":"trip","attributes":"#
            + attributes + #","uniquenessConstraints":[],"indexes":[["name"],["latitude","longitude"]]}]}}"#).get()
        guard case .register(let oldSchema) = old.operation else { Issue.record("not a register: \(old)"); return }
        #expect(oldSchema.entities.first?.indexes == [IndexDescription(["name"]), IndexDescription(["latitude", "longitude"], kind: .binary)])

        let new = try WireTest.decode(#"{"id":2,"op":"register","schema":{"version":"1.0.0","entities":[{"name":"Trip","tableName":"trip","attributes":"#
            + attributes + #","indexes":[{"kind":"binary","attributes":["name"]},{"kind":"rtree","attributes":["latitude","longitude"]}]}]}}"#).get()
        guard case .register(let newSchema) = new.operation else { Issue.record("not a register: \(new)"); return }
        let kinds = [IndexDescription(["name"]), IndexDescription(["latitude", "longitude"], kind: .rtree)]
        #expect(newSchema.entities.first?.indexes == kinds)

        // Encoding: binary stays the original array, so unchanged schemas encode (and fingerprint) as before.
        var entity = try #require(newSchema.entities.first)
        let line = try WireTest.text(Request(id: 3, operation: .register(SchemaDescription(entities: [entity]))).encodedLine())
        #expect(line.contains(#""indexes":[["name"],{"attributes":["latitude","longitude"],"kind":"rtree"}]"#))
        entity.indexes = [["name"], ["latitude", "longitude"]]
        let binaryLine = try WireTest.text(Request(id: 4, operation: .register(SchemaDescription(entities: [entity]))).encodedLine())
        #expect(binaryLine.contains(#""indexes":[["name"],["latitude","longitude"]]"#))
        #expect(try Request.decode(line: Data(line.utf8)).get() == Request(id: 3, operation: .register(newSchema)))

        // An unknown kind or a malformed index is the client's error, naming the field.
        let unknown = WireTest.failure(#"{"id":5,"op":"register","schema":{"version":"1.0.0","entities":[{"name":"Trip","tableName":"trip","attributes":[],"#
            + #""indexes":[{"kind":"hash","attributes":["name"]}]}]}}"#)
        #expect(unknown?.error.code == .invalidField)
        let number = WireTest.failure(#"{"id":6,"op":"register","schema":{"version":"1.0.0","entities":[{"name":"Trip","tableName":"trip","attributes":[],"#
            + #""indexes":[7]}]}}"#)
        #expect(number?.error.code == .invalidField)
    }

    @Test("register: a uniqueness constraint is an array of names (per owner, the original form) or an object with its scope")
    func registerUniquenessScopes() throws {
        let attributes = #"[{"name":"handle","columnName":"handle","type":"string","isGloballyUnique":true},{"name":"nickname","columnName":"nickname","type":"string","isUnique":true}]"#
        // What clients sent before scopes existed: every constraint per owner.
        let old = try WireTest.decode(#"{"id":1,"op":"register","schema":{"version":"1.0.0","entities":[{"name":"Member","tableName":"member","attributes":"#
            + #"[{"name":"nickname","columnName":"nickname","type":"string","isUnique":true}],"uniquenessConstraints":[["nickname"]]}]}}"#).get()
        guard case .register(let oldSchema) = old.operation else { Issue.record("not a register: \(old)"); return }
        #expect(oldSchema.entities.first?.uniquenessConstraints == [UniquenessConstraintDescription(["nickname"], scope: .owner)])

        let new = try WireTest.decode(#"{"id":2,"op":"register","schema":{"version":"1.0.0","entities":[{"name":"Member","tableName":"member","attributes":"#
            + attributes + #","uniquenessConstraints":[{"attributes":["handle"],"scope":"allUsers"},{"attributes":["nickname"]}]}]}}"#).get()
        guard case .register(let newSchema) = new.operation else { Issue.record("not a register: \(new)"); return }
        let entity = try #require(newSchema.entities.first)
        #expect(entity.uniquenessConstraints == [UniquenessConstraintDescription(["handle"], scope: .allUsers), ["nickname"]])
        #expect(entity.attribute(named: "handle")?.isGloballyUnique == true)

        // Encoding: per owner stays the original array.
        let line = try WireTest.text(Request(id: 3, operation: .register(newSchema)).encodedLine())
        #expect(line.contains(#""uniquenessConstraints":[{"attributes":["handle"],"scope":"allUsers"},["nickname"]]"#))
        #expect(try Request.decode(line: Data(line.utf8)).get() == Request(id: 3, operation: .register(newSchema)))

        // An unknown scope is the client's error, naming the field.
        let unknown = WireTest.failure(#"{"id":4,"op":"register","schema":{"version":"1.0.0","entities":[{"name":"Member","tableName":"member","attributes":[],"#
            + #""uniquenessConstraints":[{"attributes":["handle"],"scope":"everyone"}]}]}}"#)
        #expect(unknown?.error.code == .invalidField)
    }

    @Test("every operation survives encode → decode", arguments: everyOperation)
    func roundTrip(operation: Request.Operation) throws {
        for id: RequestID in [1, -7, "req-1", .int(Int64.max)] {
            let request = Request(id: id, operation: operation)
            let decoded = try Request.decode(line: request.encodedLine().dropLast()).get()
            #expect(decoded == request)
            // Every op carries the client's deadline the same way.
            let timed = Request(id: id, operation: operation, timeout: .milliseconds(2500))
            #expect(try Request.decode(line: timed.encodedLine().dropLast()).get() == timed)
            // The buffer a client writes holds the same line, fast encoder or general.
            #expect(try Array(timed.encodedLineBuffer().readableBytesView) == Array(timed.encodedLine()))
        }
    }

    @Test("timeoutMs: the client's deadline in whole milliseconds, rounded up and kept within 1 ms to 24 h")
    func timeoutMilliseconds() throws {
        #expect(try WireTest.text(Request(id: 1, operation: .ping, timeout: .seconds(5)).encodedLine()) == #"{"id":1,"op":"ping","timeoutMs":5000}"#)
        #expect(Request(id: 1, operation: .ping, timeout: .microseconds(1500)).timeoutMilliseconds == 2)
        #expect(Request(id: 1, operation: .ping, timeout: .nanoseconds(1)).timeoutMilliseconds == 1)
        #expect(Request(id: 1, operation: .ping, timeout: .seconds(365 * 86_400)).timeoutMilliseconds == 86_400_000)
        #expect(Request(id: 1, operation: .ping, timeout: .seconds(Int64.max)).timeoutMilliseconds == 86_400_000)
        #expect(Request(id: 1, operation: .ping).timeoutMilliseconds == nil)
        let save = try Request.decode(line: Data(#"{"id":2,"op":"save","inserts":[],"timeoutMs":750}"#.utf8)).get()
        #expect(save.timeout == .milliseconds(750))
        // null is absent: the server's own deadline alone.
        #expect(try Request.decode(line: Data(#"{"id":3,"op":"ping","timeoutMs":null}"#.utf8)).get().timeout == nil)
    }

    @Test("every op name is covered by the round trip")
    func everyOpCovered() {
        let covered = Set(Self.everyOperation.map(\.name))
        #expect(covered == Set(Request.Operation.Name.allCases))
    }

    @Test("hello line snapshot")
    func helloSnapshot() throws {
        let line = try WireTest.text(Request(id: 1, operation: .hello(HelloPayload(user: "alice", password: "pw"))).encodedLine())
        #expect(line == #"{"id":1,"op":"hello","password":"pw","protocol":1,"user":"alice"}"#)
    }

    @Test("fetch line snapshot: FetchRequest fields inline, IR in its compact JSON")
    func fetchSnapshot() throws {
        let request = FetchRequest(
            entity: "Trip", predicate: .compare(.equal, .key("destination"), .value(.string("Paris"))),
            sort: [SortKey("startDate")], limit: 10)
        let line = try WireTest.text(Request(id: 2, operation: .fetch(request)).encodedLine())
        #expect(line == #"{"entity":"Trip","id":2,"limit":10,"op":"fetch","sort":[{"key":"startDate"}],"where":{"eq":[{"key":"destination"},{"value":"Paris"}]}}"#)
        let shared = try WireTest.text(Request(id: 3, operation: .fetch(FetchRequest(entity: "Trip", ownership: .sharedWithMe))).encodedLine())
        #expect(shared == #"{"entity":"Trip","id":3,"op":"fetch","ownership":"sharedWithMe"}"#)
    }

    @Test("save line snapshot: lowercase ids, tagged values, sorted keys")
    func saveSnapshot() throws {
        let save = SaveRequest(
            inserts: [RowValues(entity: "Trip", id: WireTest.tripID, values: ["name": .string("Paris"), "perdiem": .double(120)])],
            deletes: [RowReference(entity: "Trip", id: WireTest.otherID)])
        let line = try WireTest.text(Request(id: "s1", operation: .save(save)).encodedLine())
        #expect(line == #"{"deletes":[{"entity":"Trip","id":"0193a7c4-5e6f-7a8b-9c0d-000000000001"}],"id":"s1","inserts":[{"entity":"Trip","id":"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","values":{"name":"Paris","perdiem":{"double":120}}}],"op":"save","updates":[]}"#)
    }

    @Test("ping and bye snapshots")
    func pingSnapshot() throws {
        #expect(try WireTest.text(Request(id: 3, operation: .ping).encodedLine()) == #"{"id":3,"op":"ping"}"#)
        #expect(try WireTest.text(Request(id: 4, operation: .bye).encodedLine()) == #"{"id":4,"op":"bye"}"#)
    }

    @Test("hand-written lines decode: unknown fields ignored, absent save lists empty, CR-free JSON whitespace")
    func handWritten() throws {
        let hello = try WireTest.decode(#" { "id" : 1 , "op" : "hello", "user":"bob", "password":"", "protocol": 1, "client":"nc" } "#).get()
        #expect(hello == Request(id: 1, operation: .hello(HelloPayload(user: "bob", password: ""))))

        let save = try WireTest.decode(#"{"id":2,"op":"save","deletes":[{"entity":"Trip","id":"0193A7C4-5E6F-7A8B-9C0D-000000000001"}]}"#).get()
        #expect(save.operation == .save(SaveRequest(deletes: [RowReference(entity: "Trip", id: WireTest.otherID)])))

        let count = try WireTest.decode(#"{"id":"c","op":"count","entity":"Trip","where":{"gt":[{"key":"n"},{"value":2}]}}"#).get()
        #expect(count.operation == .count(FetchRequest(entity: "Trip", predicate: .compare(.greater, .key("n"), .value(.int(2))))))
    }

    @Test("the hello payload never prints its password")
    func passwordNotPrinted() {
        let request = Request(id: 1, operation: .hello(HelloPayload(user: "alice", password: "hunter2")))
        #expect(!String(describing: request).contains("hunter2"))
        #expect(!String(reflecting: request).contains("hunter2"))
        #expect(String(describing: request).contains("alice"))
    }
}

extension Request.Operation: CustomTestStringConvertible {
    public var testDescription: String { name.rawValue }
}

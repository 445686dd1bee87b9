import Foundation
import Logging
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
@_spi(PGModelInternals) import PGModelSQL
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO
import Testing

/// The models of the entity isolation suite: a trip owns its stops (the key on the child), its cover
/// photo (a to-one `.cascade`, the key on the trip) and its supplies (a join table); a supply points at a
/// stop without owning it. Notes are unrelated rows whose ids a hostile client picks.
enum IsolationModels {
    @Model final class Trip {
        var name: String
        @Relationship(deleteRule: .cascade, inverse: \Stop.trip) var stops: [Stop] = []
        @Relationship(deleteRule: .cascade) var cover: Photo?
        @Relationship(deleteRule: .cascade) var supplies: [Supply] = []

        init(name: String) { self.name = name }
    }

    @Model final class Stop {
        var name: String
        @Attribute(.unique) var code: String?
        var trip: Trip?

        init(name: String, trip: Trip? = nil) {
            self.name = name
            self.trip = trip
        }
    }

    @Model final class Photo {
        var caption: String

        init(caption: String) { self.caption = caption }
    }

    @Model final class Supply {
        var item: String
        var stop: Stop?

        init(item: String) { self.item = item }
    }

    @Model final class Note {
        var text: String

        init(text: String) { self.text = text }
    }

    static let types: [any PersistentModel.Type] = [Trip.self, Stop.self, Photo.self, Supply.self, Note.self]
}

/// A row's visibility depends only on its own table, id and owner and on shares of that same entity; a
/// grantee attaches only what they could already see; errors tell nothing of rows the caller cannot see.
/// Every case is played by hostile clients through the real service, on raw sockets: the ids they reuse
/// are the ones a client sees or guesses.
@Suite("Isolation: shares are keyed by entity, writes judged as of before, no oracle")
struct EntityIsolationTests {
    static let schema = Schema(IsolationModels.types).schemaDescription
    static let schemaJSON: String = {
        (try? String(decoding: JSONEncoder().encode(schema), as: UTF8.self)) ?? "{}"
    }()

    /// One logged-in raw connection.
    final class Wire: Sendable {
        let client: RawProtocolClient
        let name: String
        private let next = NIOLockedValueBox(10)

        init(_ client: RawProtocolClient, _ name: String) {
            self.client = client
            self.name = name
        }

        /// Sends `op` (a JSON object's members without `id`) and returns the answer.
        @discardableResult
        func send(_ members: String) async throws -> RawResponse {
            let id = next.withLockedValue { value in
                value += 1
                return value
            }
            return try await client.request(#"{"id":\#(id),\#(members)}"#)
        }

        func save(_ members: String) async throws -> RawResponse {
            try await send(#""op":"save",\#(members)"#)
        }

        func fetchIDs(_ entity: String) async throws -> [String] {
            let answer = try await send(#""op":"fetch","entity":"\#(entity)""#)
            return (answer.rows ?? []).compactMap { $0["id"] as? String }
        }

        /// Every visible history change as (entity, id).
        func history() async throws -> [(entity: String, id: String)] {
            let answer = try await send(#""op":"history","history":{"limit":1000}"#)
            let transactions = (answer.object["history"] as? [String: Any])?["transactions"] as? [[String: Any]] ?? []
            return transactions.flatMap { t in
                (t["changes"] as? [[String: Any]] ?? []).map { ($0["entity"] as? String ?? "", $0["id"] as? String ?? "") }
            }
        }

        func share(_ entity: String, _ id: String, with user: String, _ permission: String) async throws -> RawResponse {
            try await send(#""op":"share","entity":"\#(entity)","rowID":"\#(id)","user":"\#(user)","permission":"\#(permission)""#)
        }

        func unshare(_ entity: String, _ id: String, with user: String) async throws -> RawResponse {
            try await send(#""op":"unshare","entity":"\#(entity)","rowID":"\#(id)","user":"\#(user)""#)
        }
    }

    /// The service on a fresh schema with the isolation models, and one logged-in connection per user.
    static func withService(_ users: [AuthenticatedUser], configure: (inout LineServerConfiguration) -> Void = { _ in },
                            _ body: @Sendable (_ wires: [Wire], _ schemaName: String, _ port: Int) async throws -> Void) async throws {
        let schemaName = TestDatabase.uniqueSchema("iso")
        try await ServerTestHarness.register(schema, schemaName: schemaName)
        try await ServerTestHarness.withServer(schemaName: schemaName, configure: configure) { port in
            var wires: [Wire] = []
            for user in users {
                let client = try await RawProtocolClient.connect(port: port)
                let hello = try await RawProtocolTests.hello(client, user.name, "secret")
                try #require(hello.ok == true, "\(hello)")
                let wire = Wire(client, user.name)
                let registered = try await wire.send(#""op":"register","schema":\#(schemaJSON)"#)
                try #require(registered.ok == true, "\(registered)")
                wires.append(wire)
            }
            do {
                try await body(wires, schemaName, port)
            } catch {
                for wire in wires { await wire.client.close() }
                throw error
            }
            for wire in wires { await wire.client.close() }
        }
    }

    static func newID() -> String { UUID.v7().uuidString.lowercased() }

    static func trusted(_ schemaName: String, _ sql: String) async throws -> [String] {
        try await SharingTests.trusted(schemaName, sql)
    }

    /// Alice's private trip T with a stop S: what every case attacks.
    static func alicesTrip(_ alice: Wire) async throws -> (trip: String, stop: String) {
        let t = newID(), s = newID()
        let saved = try await alice.save(#"""
            "inserts":[{"entity":"Trip","id":"\#(t)","values":{"name":"alice-private"}},\#
            {"entity":"Stop","id":"\#(s)","values":{"name":"alice-stop","code":"S-\#(s)","trip":"\#(t)"}}]
            """#)
        try #require(saved.ok == true, "\(saved)")
        return (t, s)
    }

    // MARK: Ids across entities

    @Test("a stranger's Note with the id of Alice's Trip, shared read-write with Rita, gives Rita nothing of the Trip")
    func sameIDNoteGivesNothing() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("sam"),
                      try await ServerTestHarness.makeUser("rita")]
        try await Self.withService(people) { wires, schemaName, _ in
            let (alice, sam, rita) = (wires[0], wires[1], wires[2])
            let (t, s) = try await Self.alicesTrip(alice)
            // Sam reuses both ids for notes of his and shares them read-write with Rita.
            let notes = try await sam.save(#"""
                "inserts":[{"entity":"Note","id":"\#(t)","values":{"text":"sam-t"}},{"entity":"Note","id":"\#(s)","values":{"text":"sam-s"}}],\#
                "shares":[{"entity":"Note","id":"\#(t)","user":"\#(rita.name)","permission":"readWrite"},\#
                {"entity":"Note","id":"\#(s)","user":"\#(rita.name)","permission":"readWrite"}]
                """#)
            #expect(notes.ok == true, "\(notes)")
            // Rita sees Sam's notes and nothing of Alice's.
            #expect(Set(try await rita.fetchIDs("Note")) == [t, s])
            #expect(try await rita.fetchIDs("Trip").isEmpty)
            #expect(try await rita.fetchIDs("Stop").isEmpty)
            let update = try await rita.save(#""updates":[{"entity":"Trip","id":"\#(t)","values":{"name":"rita-was-here"}}]"#)
            #expect(update.ok == false, "\(update)")
            let updateStop = try await rita.save(#""updates":[{"entity":"Stop","id":"\#(s)","values":{"name":"rita-was-here"}}]"#)
            #expect(updateStop.ok == false, "\(updateStop)")
            let delete = try await rita.save(#""deletes":[{"entity":"Stop","id":"\#(s)"}]"#)
            #expect((delete.object["deleted"] as? [Any])?.isEmpty ?? true, "\(delete)")
            // Alice changes her trip: Rita's history shows none of it, only Sam's notes.
            #expect(try await alice.save(#""updates":[{"entity":"Trip","id":"\#(t)","values":{"name":"alice-secret-2"}}]"#).ok == true)
            let history = try await rita.history()
            #expect(!history.contains { $0.entity == "Trip" || $0.entity == "Stop" }, "\(history)")
            #expect(history.contains { $0.entity == "Note" && $0.id == t })
            #expect(try await Self.trusted(schemaName, #"SELECT name FROM "\#(schemaName)".trip WHERE id = '\#(t)'"#) == ["alice-secret-2"])
            #expect(try await Self.trusted(schemaName, #"SELECT count(*)::text FROM "\#(schemaName)".stop WHERE id = '\#(s)'"#) == ["1"])
        }
    }

    @Test("a revoked share stays revoked when a stranger shares a same-id Note")
    func revokeStaysRevoked() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("sam"),
                      try await ServerTestHarness.makeUser("rita")]
        try await Self.withService(people) { wires, _, _ in
            let (alice, sam, rita) = (wires[0], wires[1], wires[2])
            let (t, s) = try await Self.alicesTrip(alice)
            #expect(try await alice.share("Trip", t, with: rita.name, "readOnly").ok == true)
            #expect(try await rita.fetchIDs("Trip") == [t])
            #expect(try await alice.unshare("Trip", t, with: rita.name).ok == true)
            #expect(try await sam.save(#"""
                "inserts":[{"entity":"Note","id":"\#(t)","values":{"text":"sam"}}],"shares":[{"entity":"Note","id":"\#(t)","user":"\#(rita.name)","permission":"readWrite"}]
                """#).ok == true)
            #expect(try await rita.fetchIDs("Trip").isEmpty)
            #expect(try await rita.fetchIDs("Stop").isEmpty)
            #expect(try await rita.save(#""updates":[{"entity":"Stop","id":"\#(s)","values":{"name":"x"}}]"#).ok == false)
        }
    }

    @Test("children of a read-only share stay read-only when a stranger shares same-id Notes read-write")
    func readOnlyStaysReadOnly() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("sam"),
                      try await ServerTestHarness.makeUser("rita")]
        try await Self.withService(people) { wires, schemaName, _ in
            let (alice, sam, rita) = (wires[0], wires[1], wires[2])
            let (t, s) = try await Self.alicesTrip(alice)
            #expect(try await alice.share("Trip", t, with: rita.name, "readOnly").ok == true)
            #expect(try await sam.save(#"""
                "inserts":[{"entity":"Note","id":"\#(t)","values":{"text":"sam-t"}},{"entity":"Note","id":"\#(s)","values":{"text":"sam-s"}}],\#
                "shares":[{"entity":"Note","id":"\#(t)","user":"\#(rita.name)","permission":"readWrite"},\#
                {"entity":"Note","id":"\#(s)","user":"\#(rita.name)","permission":"readWrite"}]
                """#).ok == true)
            #expect(try await rita.fetchIDs("Stop") == [s])
            let updateStop = try await rita.save(#""updates":[{"entity":"Stop","id":"\#(s)","values":{"name":"rita"}}]"#)
            #expect(updateStop.code == "forbidden", "\(updateStop)")
            let updateTrip = try await rita.save(#""updates":[{"entity":"Trip","id":"\#(t)","values":{"name":"rita"}}]"#)
            #expect(updateTrip.code == "forbidden", "\(updateTrip)")
            let child = try await rita.save(#""inserts":[{"entity":"Stop","id":"\#(Self.newID())","values":{"name":"rita","trip":"\#(t)"}}]"#)
            #expect(child.ok == false, "\(child)")
            #expect(try await Self.trusted(schemaName, #"SELECT name FROM "\#(schemaName)".stop WHERE id = '\#(s)'"#) == ["alice-stop"])
            #expect(try await Self.trusted(schemaName, #"SELECT count(*)::text FROM "\#(schemaName)".stop"#) == ["1"])
        }
    }

    @Test("a stranger can neither block (by sharing first) nor delete (by deleting a same-id Note) the owner's share")
    func strangerCannotBlockOrDeleteShares() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("sam"),
                      try await ServerTestHarness.makeUser("rita")]
        try await Self.withService(people) { wires, schemaName, _ in
            let (alice, sam, rita) = (wires[0], wires[1], wires[2])
            let (t, _) = try await Self.alicesTrip(alice)
            // Sam shares first…
            #expect(try await sam.save(#"""
                "inserts":[{"entity":"Note","id":"\#(t)","values":{"text":"sam"}}],"shares":[{"entity":"Note","id":"\#(t)","user":"\#(rita.name)","permission":"readOnly"}]
                """#).ok == true)
            // …and Alice's share answers as it would without his.
            let share = try await alice.share("Trip", t, with: rita.name, "readOnly")
            #expect(share.ok == true, "\(share)")
            #expect(try await rita.fetchIDs("Trip") == [t])
            // Sam changes, revokes and deletes his note: Alice's share stays.
            #expect(try await sam.share("Note", t, with: rita.name, "readWrite").ok == true)
            #expect(try await sam.unshare("Note", t, with: rita.name).ok == true)
            #expect(try await sam.save(#""deletes":[{"entity":"Note","id":"\#(t)"}]"#).ok == true)
            #expect(try await rita.fetchIDs("Trip") == [t])
            #expect(try await Self.trusted(schemaName,
                "SELECT permission FROM pgmodel.shares WHERE schema_name = '\(schemaName)' AND row_id = '\(t)'") == ["readOnly"])
            // Sam cannot share or revoke Alice's trip either: he cannot see it, as if it did not exist.
            let theirs = try await sam.share("Trip", t, with: rita.name, "readWrite")
            let absent = try await sam.share("Trip", Self.newID(), with: rita.name, "readWrite")
            #expect(theirs.code == "not_found" && theirs.error?["message"] as? String == absent.error?["message"] as? String, "\(theirs) \(absent)")
            #expect(try await sam.unshare("Trip", t, with: rita.name).code == "not_found")
            #expect(try await rita.fetchIDs("Trip") == [t])
        }
    }

    @Test("an owner sharing their Note does not share their Trip of the same id: no rows, no history, no events")
    func ownersNoteDoesNotShareTrip() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("rita")]
        try await Self.withService(people) { wires, _, port in
            let (alice, rita) = (wires[0], wires[1])
            let (t, _) = try await Self.alicesTrip(alice)
            #expect(try await alice.save(#"""
                "inserts":[{"entity":"Note","id":"\#(t)","values":{"text":"shared note"}}],"shares":[{"entity":"Note","id":"\#(t)","user":"\#(rita.name)","permission":"readWrite"}]
                """#).ok == true)
            #expect(try await rita.fetchIDs("Note") == [t])
            #expect(try await rita.fetchIDs("Trip").isEmpty)
            #expect(try await rita.save(#""updates":[{"entity":"Trip","id":"\#(t)","values":{"name":"rita"}}]"#).ok == false)
            // Rita listens; Alice changes the trip, then the note. Rita's first event names the note alone.
            let listener = try await RawProtocolClient.connect(port: port)
            defer { Task { await listener.close() } }
            #expect(try await RawProtocolTests.hello(listener, rita.name, "secret").ok == true)
            #expect(try await listener.request(#"{"id":2,"op":"subscribe"}"#).ok == true)
            #expect(try await alice.save(#""updates":[{"entity":"Trip","id":"\#(t)","values":{"name":"alice-2"}}]"#).ok == true)
            #expect(try await alice.save(#""updates":[{"entity":"Note","id":"\#(t)","values":{"text":"note-2"}}]"#).ok == true)
            // Change events up to the one naming the note (a `reconnected` doorbell may come first).
            var named: [[String]] = []
            while !named.contains(where: { $0.contains("Note") }) {
                let event = try RawResponse(try await listener.readLine())
                if event.object["event"] as? String == "changes" { named.append(event.object["entities"] as? [String] ?? ["(every class)"]) }
            }
            #expect(named == [["Note"]], "\(named)")
            let history = try await rita.history()
            #expect(!history.contains { $0.entity == "Trip" }, "\(history)")
        }
    }

    // MARK: Attaching only what one could see

    @Test("a read-write grantee cannot pull the owner's private row into the share through a to-one cascade")
    func cascadePullIn() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("will")]
        try await Self.withService(people) { wires, schemaName, _ in
            let (alice, will) = (wires[0], wires[1])
            let (t, _) = try await Self.alicesTrip(alice)
            let p = Self.newID()
            #expect(try await alice.save(#""inserts":[{"entity":"Photo","id":"\#(p)","values":{"caption":"alice-private-photo"}}]"#).ok == true)
            #expect(try await alice.share("Trip", t, with: will.name, "readWrite").ok == true)
            let pull = try await will.save(#""updates":[{"entity":"Trip","id":"\#(t)","values":{"cover":"\#(p)"}}]"#)
            let absent = try await will.save(#""updates":[{"entity":"Trip","id":"\#(t)","values":{"cover":"\#(Self.newID())"}}]"#)
            #expect(pull.ok == false, "\(pull)")
            // The same answer as a reference to no row at all.
            #expect(pull.errorWithoutRequestID == absent.errorWithoutRequestID, "\(pull) \(absent)")
            #expect(try await will.fetchIDs("Photo").isEmpty)
            #expect(try await Self.trusted(schemaName, #"SELECT coalesce(cover_id::text, 'none') FROM "\#(schemaName)".trip WHERE id = '\#(t)'"#) == ["none"])
            // A photo Will adds in the same save is his to attach: it belongs to Alice and stays in the share.
            let mine = Self.newID()
            let attach = try await will.save(#"""
                "inserts":[{"entity":"Photo","id":"\#(mine)","values":{"caption":"will's"}}],"updates":[{"entity":"Trip","id":"\#(t)","values":{"cover":"\#(mine)"}}]
                """#)
            #expect(attach.ok == true, "\(attach)")
            #expect(try await will.fetchIDs("Photo") == [mine])
        }
    }

    @Test("a grantee cannot make a read-only row writable through a read-write share's cascade, nor add to a read-only record")
    func readOnlyNeverJoinsAReadWriteShare() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("will")]
        try await Self.withService(people) { wires, schemaName, _ in
            let (alice, will) = (wires[0], wires[1])
            // Alice's trip T1 (shared read-only) has a cover P1, a supply V1 and a stop S1; T2 (shared
            // read-write) has a stop S2; T3 (also read-write) is empty.
            let (t1, s1) = try await Self.alicesTrip(alice)
            let (t2, s2) = try await Self.alicesTrip(alice)
            let t3 = Self.newID(), p1 = Self.newID(), v1 = Self.newID()
            #expect(try await alice.save(#"""
                "inserts":[{"entity":"Trip","id":"\#(t3)","values":{"name":"third"}},{"entity":"Photo","id":"\#(p1)","values":{"caption":"p1"}},\#
                {"entity":"Supply","id":"\#(v1)","values":{"item":"v1"}}],\#
                "updates":[{"entity":"Trip","id":"\#(t1)","values":{"cover":"\#(p1)"}}],\#
                "links":[{"entity":"Trip","relationship":"supplies","source":"\#(t1)","destination":"\#(v1)","isAdded":true}]
                """#).ok == true)
            #expect(try await alice.share("Trip", t1, with: will.name, "readOnly").ok == true)
            #expect(try await alice.share("Trip", t2, with: will.name, "readWrite").ok == true)
            #expect(try await alice.share("Trip", t3, with: will.name, "readWrite").ok == true)
            #expect(Set(try await will.fetchIDs("Photo")) == [p1])
            #expect(Set(try await will.fetchIDs("Supply")) == [v1])
            // Attaching read-only rows under a read-write record: the to-one cascade, the join table, the
            // child's key. Each is refused and changes nothing.
            let cover = try await will.save(#""updates":[{"entity":"Trip","id":"\#(t2)","values":{"cover":"\#(p1)"}}]"#)
            #expect(cover.code == "forbidden", "\(cover)")
            let link = try await will.save(#""links":[{"entity":"Trip","relationship":"supplies","source":"\#(t2)","destination":"\#(v1)","isAdded":true}]"#)
            #expect(link.code == "forbidden", "\(link)")
            // Adding to the read-only record: moving a writable stop under it, linking a new supply into it.
            let move = try await will.save(#""updates":[{"entity":"Stop","id":"\#(s2)","values":{"trip":"\#(t1)"}}]"#)
            #expect(move.code == "forbidden", "\(move)")
            let mine = Self.newID()
            let add = try await will.save(#"""
                "inserts":[{"entity":"Supply","id":"\#(mine)","values":{"item":"will's"}}],\#
                "links":[{"entity":"Trip","relationship":"supplies","source":"\#(t1)","destination":"\#(mine)","isAdded":true}]
                """#)
            #expect(add.code == "forbidden", "\(add)")
            // The read-only rows stay read-only, and the records are as Alice left them.
            #expect(try await will.save(#""updates":[{"entity":"Photo","id":"\#(p1)","values":{"caption":"will"}}]"#).code == "forbidden")
            #expect(try await will.save(#""updates":[{"entity":"Supply","id":"\#(v1)","values":{"item":"will"}}]"#).code == "forbidden")
            #expect(try await Self.trusted(schemaName, #"SELECT coalesce(cover_id::text, 'none') FROM "\#(schemaName)".trip WHERE id = '\#(t2)'"#) == ["none"])
            #expect(try await Self.trusted(schemaName, #"SELECT trip_id::text FROM "\#(schemaName)".stop WHERE id = '\#(s2)'"#) == [t2])
            #expect(try await Self.trusted(schemaName, #"SELECT count(*)::text FROM "\#(schemaName)".trip_supplies"#) == ["1"])
            // Between two records shared read-write, moving is the grantee's to do.
            let between = try await will.save(#""updates":[{"entity":"Stop","id":"\#(s2)","values":{"trip":"\#(t3)"}}]"#)
            #expect(between.ok == true, "\(between)")
            #expect(try await will.save(#""updates":[{"entity":"Stop","id":"\#(s1)","values":{"name":"will"}}]"#).code == "forbidden")
        }
    }

    @Test("a child a grantee adds with the id of the record it joins belongs to the record's owner")
    func childWithItsParentsID() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("will")]
        try await Self.withService(people) { wires, schemaName, _ in
            let (alice, will) = (wires[0], wires[1])
            let (t, _) = try await Self.alicesTrip(alice)
            #expect(try await alice.share("Trip", t, with: will.name, "readWrite").ok == true)
            let added = try await will.save(#""inserts":[{"entity":"Stop","id":"\#(t)","values":{"name":"will's","trip":"\#(t)"}}]"#)
            #expect(added.ok == true, "\(added)")
            let owners = try await Self.trusted(schemaName, #"""
                SELECT (s.owner_id = t.owner_id)::text FROM "\#(schemaName)".stop s JOIN "\#(schemaName)".trip t ON t.id = s.trip_id WHERE s.id = '\#(t)'
                """#)
            #expect(owners == ["true"])
            #expect(try await alice.fetchIDs("Stop").contains(t))
        }
    }

    @Test("a save cannot write history for rows it did not change: same-id updates and links that change nothing")
    func noHistoryForWhatDidNotChange() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("mallory"),
                      try await ServerTestHarness.makeUser("rita")]
        try await Self.withService(people) { wires, _, _ in
            let (alice, mallory, rita) = (wires[0], wires[1], wires[2])
            let (t, _) = try await Self.alicesTrip(alice)
            let n = Self.newID()
            #expect(try await alice.save(#""inserts":[{"entity":"Note","id":"\#(n)","values":{"text":"alice's note"}}]"#).ok == true)
            #expect(try await alice.share("Note", n, with: rita.name, "readOnly").ok == true)
            #expect(try await alice.share("Trip", t, with: rita.name, "readOnly").ok == true)
            // Mallory's own Trip with the id of Alice's note, updated in one save with that note.
            #expect(try await mallory.save(#""inserts":[{"entity":"Trip","id":"\#(n)","values":{"name":"mallory's"}}]"#).ok == true)
            let forged = try await mallory.save(#"""
                "updates":[{"entity":"Trip","id":"\#(n)","values":{"name":"m2"}},{"entity":"Note","id":"\#(n)","values":{"text":"forged"}}]
                """#)
            #expect(forged.code == "not_found", "\(forged)")
            // A removal of a link that is not there, naming Alice's trip: nothing changes, nothing is written.
            let unlink = try await mallory.save(#"""
                "links":[{"entity":"Trip","relationship":"supplies","source":"\#(t)","destination":"\#(Self.newID())","isAdded":false}]
                """#)
            #expect(unlink.ok == true, "\(unlink)")
            let answer = try await rita.send(#""op":"history","history":{"limit":1000}"#)
            let transactions = (answer.object["history"] as? [String: Any])?["transactions"] as? [[String: Any]] ?? []
            let updates = transactions.flatMap { $0["changes"] as? [[String: Any]] ?? [] }.filter { $0["kind"] as? String == "update" }
            #expect(updates.isEmpty, "\(updates)")
        }
    }

    @Test("a row rewritten by ON DELETE SET NULL in the same save is not new: it cannot be linked into a shared record")
    func nullifiedRowIsNotNew() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("will")]
        try await Self.withService(people) { wires, schemaName, _ in
            let (alice, will) = (wires[0], wires[1])
            let (t, s) = try await Self.alicesTrip(alice)
            let v = Self.newID()
            // Alice's private supply points at the stop of her shared trip.
            #expect(try await alice.save(#""inserts":[{"entity":"Supply","id":"\#(v)","values":{"item":"alice-private-supply","stop":"\#(s)"}}]"#).ok == true)
            #expect(try await alice.share("Trip", t, with: will.name, "readWrite").ok == true)
            // Will deletes the stop (the supply's reference becomes NULL in this save) and links the supply in.
            let attack = try await will.save(#"""
                "deletes":[{"entity":"Stop","id":"\#(s)"}],"links":[{"entity":"Trip","relationship":"supplies","source":"\#(t)","destination":"\#(v)","isAdded":true}]
                """#)
            #expect(attack.ok == false, "\(attack)")
            #expect(try await will.fetchIDs("Supply").isEmpty)
            #expect(try await Self.trusted(schemaName, #"SELECT count(*)::text FROM "\#(schemaName)".trip_supplies"#) == ["0"])
        }
    }

    // MARK: No oracle

    @Test("references to invisible and to absent rows answer the same: code, message, no constraint name")
    func referenceErrorsAreTheSame() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("sam")]
        try await Self.withService(people) { wires, _, _ in
            let (alice, sam) = (wires[0], wires[1])
            let (_, s) = try await Self.alicesTrip(alice)
            func attempt(_ stop: String) async throws -> RawResponse {
                try await sam.save(#""inserts":[{"entity":"Supply","id":"\#(Self.newID())","values":{"item":"probe","stop":"\#(stop)"}}]"#)
            }
            let invisible = try await attempt(s)
            let absent = try await attempt(Self.newID())
            #expect(invisible.ok == false)
            #expect(invisible.errorWithoutRequestID == absent.errorWithoutRequestID, "\(invisible) \(absent)")
            #expect(!(invisible.message ?? "").contains("fkey"), "\(invisible)")
        }
    }

    @Test("a grantee's unique values in a shared record answer the same whether or not the owner has a private row with them")
    func uniquenessIsNoOracle() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("will")]
        try await Self.withService(people) { wires, _, _ in
            let (alice, will) = (wires[0], wires[1])
            let (t, _) = try await Self.alicesTrip(alice)
            let other = Self.newID()
            // Alice's private stop (of a trip of hers that is not shared) holds the code "taken".
            #expect(try await alice.save(#"""
                "inserts":[{"entity":"Trip","id":"\#(other)","values":{"name":"private"}},{"entity":"Stop","id":"\#(Self.newID())","values":{"name":"p","code":"taken","trip":"\#(other)"}}]
                """#).ok == true)
            #expect(try await alice.share("Trip", t, with: will.name, "readWrite").ok == true)
            func add(_ code: String) async throws -> RawResponse {
                try await will.save(#""inserts":[{"entity":"Stop","id":"\#(Self.newID())","values":{"name":"w","code":"\#(code)","trip":"\#(t)"}}]"#)
            }
            let taken = try await add("taken")
            let free = try await add("free-\(Self.newID())")
            #expect(taken.ok == free.ok, "\(taken) \(free)")
            #expect(taken.errorWithoutRequestID == free.errorWithoutRequestID, "\(taken) \(free)")
            // A stop without a unique value is a grantee's to add, as always.
            let plain = try await will.save(#""inserts":[{"entity":"Stop","id":"\#(Self.newID())","values":{"name":"w","trip":"\#(t)"}}]"#)
            #expect(plain.ok == true, "\(plain)")
        }
    }

    @Test("probing user names or hidden records with shares is slowed down like logins: past the allowance, rate_limited before anything runs")
    func shareProbesAreThrottled() async throws {
        let people = [try await ServerTestHarness.makeUser("alice"), try await ServerTestHarness.makeUser("rita"),
                      try await ServerTestHarness.makeUser("sam")]
        try await Self.withService(people, configure: {
            $0.shareProbeThrottle.freeFailuresPerUser = 3
            $0.shareProbeThrottle.freeFailuresPerAddress = 1_000
            $0.shareProbeThrottle.initialDelay = .seconds(60)
        }) { wires, schemaName, _ in
            let (alice, rita, sam) = (wires[0], wires[1], wires[2])
            let (t, _) = try await Self.alicesTrip(alice)
            // Misses of either kind count: names that do not exist, records Alice cannot see.
            var codes: [String?] = []
            codes.append(try await alice.share("Trip", t, with: "nobody-\(Self.newID())", "readOnly").code)
            codes.append(try await alice.share("Trip", Self.newID(), with: rita.name, "readOnly").code)
            codes.append(try await alice.save(#""shares":[{"entity":"Trip","id":"\#(t)","user":"nobody-x","permission":"readOnly"}]"#).code)
            codes.append(try await alice.unshare("Trip", t, with: "nobody-y").code)
            #expect(codes == ["not_found", "not_found", "not_found", "not_found"], "\(codes)")
            // Now even a share that would succeed waits, and nothing of it runs.
            let held = try await alice.share("Trip", t, with: rita.name, "readOnly")
            #expect(held.code == "rate_limited", "\(held)")
            #expect(try await rita.fetchIDs("Trip").isEmpty)
            #expect(try await Self.trusted(schemaName, "SELECT count(*)::text FROM pgmodel.shares WHERE schema_name = '\(schemaName)'") == ["0"])
            // Alice's other requests and other users go on as before.
            #expect(try await alice.fetchIDs("Trip") == [t])
            let samsNote = Self.newID()
            let samShares = try await sam.save(#"""
                "inserts":[{"entity":"Note","id":"\#(samsNote)","values":{"text":"sam"}}],"shares":[{"entity":"Note","id":"\#(samsNote)","user":"\#(rita.name)","permission":"readOnly"}]
                """#)
            #expect(samShares.ok == true, "\(samShares)")
        }
    }

    // MARK: PostgreSQL alone

    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.isolation")
        logger.logLevel = .warning
        return logger
    }()

    @Test("as pgmodel_app with a stranger's user id in psql, the policies alone keep entities apart")
    func policiesHoldByThemselves() async throws {
        try await EngineTestStore.with(Self.schema, prefix: "isq", logger: Self.logger) { engine, c, schemaName in
            let suffix = ServerTestHarness.uniqueSuffix()
            let alice = try await engine.createUser(name: "isq_alice_\(suffix)", password: "x", isAdmin: false, on: c)
            let sam = try await engine.createUser(name: "isq_sam_\(suffix)", password: "x", isAdmin: false, on: c)
            let rita = try await engine.createUser(name: "isq_rita_\(suffix)", password: "x", isAdmin: false, on: c)
            let t = UUID.v7(), s = UUID.v7(), p = UUID.v7()
            _ = try await engine.save(SaveRequest(inserts: [
                RowValues(entity: "Trip", id: t, values: ["name": .string("T")]),
                RowValues(entity: "Stop", id: s, values: ["name": .string("S"), "trip": .uuid(t)]),
                RowValues(entity: "Photo", id: p, values: ["caption": .string("P")]),
            ]), in: Self.schema, as: .user(alice), on: c)
            _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Note", id: t, values: ["text": .string("N")])],
                                                  shares: [ShareChange(record: RowReference(entity: "Note", id: t), user: rita.name, permission: .readWrite)]),
                                      in: Self.schema, as: .user(sam), on: c)
            let q = Naming.quoted(schemaName)
            let asUser = SharingSafetyTests.asUser
            // Rita, whom Sam's same-id note is shared with: nothing of Alice's, by any SQL.
            for sql in ["SELECT * FROM \(q).trip", "SELECT * FROM \(q).stop", "SELECT * FROM \(q).photo",
                        "UPDATE \(q).trip SET name = 'x'", "UPDATE \(q).stop SET name = 'x'", "DELETE FROM \(q).stop",
                        "SELECT * FROM pgmodel.change_rows WHERE entity IN ('Trip', 'Stop')",
                        "SELECT * FROM pgmodel.changes WHERE entity IN ('Trip', 'Stop')"] {
                #expect(await asUser(rita.id, c, SQLStatement(sql: sql)) == .success(0), "\(sql)")
            }
            #expect(await asUser(rita.id, c, SQLStatement(sql: "SELECT * FROM \(q).note")) == .success(1))
            // Sam writes a share row naming Alice's trip by hand, as its owner: whether or not the row goes
            // in, it shows Rita nothing, because a share covers a row only while the row has the share's owner.
            try await SharingSafetyTests.run(c, SQLStatement(sql: "BEGIN"))
            try await SharingSafetyTests.run(c, SQLStatement(sql: "SELECT set_config('role', 'pgmodel_app', true), set_config('pgmodel.user_id', $1, true)",
                                                             binds: [.string(sam.id.uuidString.lowercased())]))
            try await SharingSafetyTests.run(c, SQLStatement(sql: "SAVEPOINT forged"))
            let inserted = try? await SharingSafetyTests.run(c, SQLStatement(sql: """
                INSERT INTO pgmodel.shares (schema_name, entity, root_entity, row_id, owner_id, grantee_id, permission, granted_by) \
                VALUES ('\(schemaName)', 'Trip', 'Trip', '\(t)', '\(sam.id)', '\(rita.id)', 'readWrite', 'sam')
                """))
            if inserted == nil { try await SharingSafetyTests.run(c, SQLStatement(sql: "ROLLBACK TO SAVEPOINT forged")) }
            _ = try? await SharingSafetyTests.run(c, SQLStatement(sql: "SELECT set_config('pgmodel.user_id', $1, true)",
                                                                  binds: [.string(rita.id.uuidString.lowercased())]))
            let ritaSees = try? await SharingSafetyTests.run(c, SQLStatement(sql: "SELECT * FROM \(q).trip"))
            _ = try? await SharingSafetyTests.run(c, SQLStatement(sql: "ROLLBACK"))
            #expect(ritaSees == 0)
            // Nor can Sam make Alice's photo "new" to link it: the new-row list is not his to write.
            let claim = await asUser(sam.id, c, SQLStatement(sql: "INSERT INTO pg_temp.pgmodel_new_rows VALUES ('\(q).photo'::regclass, '\(p)')"))
            #expect(claim != .success(1))
            #expect(await asUser(sam.id, c, SQLStatement(sql: "SELECT 1 WHERE pgmodel.is_new_row('\(q).photo'::regclass, '\(p)')")) == .success(0))
            // A read-write grantee pointing the shared trip's cover at Alice's private photo in hand-written
            // SQL: refused when the deferred checks run, as a reference to no row is.
            _ = try await engine.save(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Trip", id: t), user: rita.name, permission: .readWrite)]),
                                      in: Self.schema, as: .user(alice), on: c)
            func pointCover(at photo: UUID) async -> PGModelError.Code? {
                var code: PGModelError.Code?
                do {
                    try await SharingSafetyTests.run(c, SQLStatement(sql: "BEGIN"))
                    try await SharingSafetyTests.run(c, SQLStatement(sql: "SELECT set_config('role', 'pgmodel_app', true), set_config('pgmodel.user_id', $1, true)",
                                                                     binds: [.string(rita.id.uuidString.lowercased())]))
                    try await SharingSafetyTests.run(c, SQLStatement(sql: "UPDATE \(q).trip SET cover_id = '\(photo)' WHERE id = '\(t)'"))
                    try await SharingSafetyTests.run(c, SQLStatement(sql: "SET CONSTRAINTS ALL IMMEDIATE"))
                } catch let error as PGModelError {
                    code = error.code
                } catch {
                    code = .internalError
                }
                _ = try? await SharingSafetyTests.run(c, SQLStatement(sql: "ROLLBACK"))
                return code
            }
            #expect(await pointCover(at: p) == .constraintViolation)
            #expect(await pointCover(at: UUID.v7()) == .constraintViolation)
        }
    }

    @Test("a share in one store covers nothing of another store's row with the same class and id: rows or history")
    func storesStayApart() async throws {
        try await EngineTestStore.with(Self.schema, prefix: "isa", logger: Self.logger) { engineA, c, schemaA in
            try await EngineTestStore.with(Self.schema, prefix: "isb", logger: Self.logger) { engineB, _, schemaB in
                let suffix = ServerTestHarness.uniqueSuffix()
                let alice = try await engineA.createUser(name: "isa_alice_\(suffix)", password: "x", isAdmin: false, on: c)
                let bob = try await engineA.createUser(name: "isa_bob_\(suffix)", password: "x", isAdmin: false, on: c)
                let rita = try await engineA.createUser(name: "isa_rita_\(suffix)", password: "x", isAdmin: false, on: c)
                let t = UUID.v7()
                _ = try await engineA.save(SaveRequest(inserts: [RowValues(entity: "Trip", id: t, values: ["name": .string("A")])],
                                                       shares: [ShareChange(record: RowReference(entity: "Trip", id: t), user: rita.name, permission: .readWrite)]),
                                           in: Self.schema, as: .user(alice), on: c)
                _ = try await engineB.save(SaveRequest(inserts: [RowValues(entity: "Trip", id: t, values: ["name": .string("B")])]),
                                           in: Self.schema, as: .user(bob), on: c)
                _ = try await engineB.save(SaveRequest(updates: [RowValues(entity: "Trip", id: t, values: ["name": .string("B2")])]),
                                           in: Self.schema, as: .user(bob), on: c)
                let asUser = SharingSafetyTests.asUser
                #expect(await asUser(rita.id, c, SQLStatement(sql: "SELECT * FROM \(Naming.quoted(schemaA)).trip")) == .success(1))
                #expect(await asUser(rita.id, c, SQLStatement(sql: "SELECT * FROM \(Naming.quoted(schemaB)).trip")) == .success(0))
                #expect(await asUser(rita.id, c, SQLStatement(sql: "UPDATE \(Naming.quoted(schemaB)).trip SET name = 'x'")) == .success(0))
                #expect(await asUser(rita.id, c, SQLStatement(sql: """
                    SELECT 1 FROM pgmodel.change_rows c JOIN pgmodel.transactions x ON x.id = c.transaction_id WHERE x.schema_name = '\(schemaB)'
                    """)) == .success(0))
                #expect(await asUser(rita.id, c, SQLStatement(sql: """
                    SELECT 1 FROM pgmodel.change_rows c JOIN pgmodel.transactions x ON x.id = c.transaction_id WHERE x.schema_name = '\(schemaA)'
                    """)) != .success(0))
            }
        }
    }

    // MARK: Upgrading in place

    @Test("a store whose shares matched ids alone keeps each share's meaning: it now covers its own class only")
    func upgradeKeepsSharesMeaning() async throws {
        try await ScratchDatabase.with(label: "pgmodel.test.share-upgrade") { c, logger in
            func run(_ sql: String) async throws { _ = try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect() }
            let schema = SchemaDescription(entities: [
                EntityDescription(name: "Voyage", attributes: [AttributeDescription(name: "name", type: .string)]),
                EntityDescription(name: "Cruise", attributes: [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "ship", type: .string)],
                                  superentity: "Voyage"),
                EntityDescription(name: "Memo", attributes: [AttributeDescription(name: "name", type: .string)]),
            ])
            let engine = PostgresStoreEngine(schemaName: "public", logger: logger)
            try await engine.bootstrap(on: EngineConnection(c))
            try await engine.prepare(schema, on: EngineConnection(c))
            let alice = try await engine.createUser(name: "alice", password: "x", isAdmin: false, on: EngineConnection(c))
            let rita = try await engine.createUser(name: "rita", password: "x", isAdmin: false, on: EngineConnection(c))
            let id = UUID.v7()
            _ = try await engine.save(SaveRequest(inserts: [RowValues(entity: "Cruise", id: id, values: ["name": .string("C"), "ship": .string("S")]),
                                                            RowValues(entity: "Memo", id: id, values: ["name": .string("M")])]),
                                      in: schema, as: .user(alice), on: EngineConnection(c))
            // The layout before: no root class, a key of id and grantee, and a share of the cruise as the
            // service made it (its own class recorded in entity).
            try await run("DROP VIEW pgmodel.share_list")
            try await run("ALTER TABLE pgmodel.shares DROP CONSTRAINT shares_pkey")
            try await run("ALTER TABLE pgmodel.shares DROP COLUMN root_entity")
            try await run("ALTER TABLE pgmodel.shares ADD PRIMARY KEY (schema_name, row_id, grantee_id)")
            try await run("""
                INSERT INTO pgmodel.shares (schema_name, entity, row_id, owner_id, grantee_id, permission, granted_by)
                VALUES ('public', 'Cruise', '\(id)', '\(alice.id)', '\(rita.id)', 'readOnly', 'alice')
                """)
            try await run("COMMENT ON SCHEMA pgmodel IS NULL")
            try await run("COMMENT ON FUNCTION public.pgmodel_share_audience(text[], uuid[]) IS NULL")
            // This build starts again and the schema is registered.
            try await engine.bootstrap(on: EngineConnection(c))
            try await engine.prepare(schema, on: EngineConnection(c))
            let roots = try await c.query(PostgresQuery(unsafeSQL: "SELECT root_entity FROM pgmodel.shares WHERE row_id = '\(id)'"), logger: logger).collect()
            #expect(try roots.map { try $0.decode(String.self) } == ["Voyage"])
            let renderer = try SQLRenderer(schema: schema, schemaName: "public")
            #expect(await SharingSafetyTests.asUser(rita.id, EngineConnection(c), try renderer.select(FetchRequest(entity: "Voyage"))) == .success(1))
            #expect(await SharingSafetyTests.asUser(rita.id, EngineConnection(c), try renderer.select(FetchRequest(entity: "Memo"))) == .success(0))
        }
    }
}

import Foundation
import Logging
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO
import PGModelTestSupport
import Testing

/// Hostile users through the real service, at random: every user of two stores (two `pgmodel serve`
/// instances on two schemas of one database) inserts, updates, deletes, links, shares and revokes, reusing
/// every id that exists in any class of either store, with or without the right to. After every step the
/// database (read as its owner), each user's view of every class in both stores, `pgmodel.shares`, each
/// user's history and the change events are checked against ``AdversarialWorld``'s plain-Swift rules;
/// every refusal of a row the user cannot see must be word for word the answer for a row that does not
/// exist.
///
/// `PGMODEL_ADVERSARIAL_SEEDS` (default 3) × `PGMODEL_ADVERSARIAL_STEPS` (default 120) size it;
/// `PGMODEL_ADVERSARIAL_SEED` replays one seed.
@Suite("Isolation: hostile users at random, checked against a model of who sees what")
struct AdversarialIsolationTests {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["PGMODEL_ADVERSARIAL_SEED"].flatMap(UInt64.init) { return [one] }
        let count = environment["PGMODEL_ADVERSARIAL_SEEDS"].flatMap(Int.init) ?? 3
        let base = UInt64.random(in: 1...(UInt64.max / 2))
        return (0..<UInt64(count)).map { base &+ $0 }
    }

    static var steps: Int { ProcessInfo.processInfo.environment["PGMODEL_ADVERSARIAL_STEPS"].flatMap(Int.init) ?? 120 }
    static let userCount = 4

    @Test("four users, two stores, every id reused across classes and stores: rows, shares, history, events and errors match the model")
    func hostileUsersAtRandom() async throws {
        for seed in Self.seeds {
            var made: [AuthenticatedUser] = []
            for index in 0..<Self.userCount { made.append(try await ServerTestHarness.makeUser("adv\(index)")) }
            let users = made
            let stores = [TestDatabase.uniqueSchema("adva"), TestDatabase.uniqueSchema("advb")]
            for store in stores { try await ServerTestHarness.register(EntityIsolationTests.schema, schemaName: store) }
            let failure: String? = try await ServerTestHarness.withDatabase { _, trusted in
                try await Self.withServices(stores) { ports in
                    var run = try await AdversarialRun(seed: seed, users: users, stores: stores, ports: ports, trusted: trusted.connection)
                    do {
                        let failure = try await run.play(steps: Self.steps)
                        print("adversarial seed \(seed): \(run.summary)")
                        await run.close()
                        return failure
                    } catch {
                        await run.close()
                        throw error
                    }
                }
            }
            if let failure {
                Issue.record("seed \(seed) (PGMODEL_ADVERSARIAL_SEED=\(seed) replays it): \(failure)")
                return
            }
        }
    }

    /// One service per store, for the duration of `body`.
    static func withServices<T: Sendable>(_ stores: [String], ports: [Int] = [],
                                         _ body: @Sendable ([Int]) async throws -> T) async throws -> T {
        guard ports.count < stores.count else { return try await body(ports) }
        return try await ServerTestHarness.withServer(schemaName: stores[ports.count], configure: { configuration in
            // The attackers are answered not_found on purpose, far past the probe allowance.
            configuration.shareProbeThrottle = .disabled
        }) { port in
            try await withServices(stores, ports: ports + [port], body)
        }
    }
}

/// One seed's play: the users' connections, the generator and what the test has seen.
struct AdversarialRun {
    typealias World = AdversarialWorld
    typealias Key = AdversarialWorld.Key
    typealias Table = AdversarialWorld.Table

    let seed: UInt64
    let users: [AuthenticatedUser]
    let stores: [String]
    let trusted: PostgresConnection
    /// `wires[user][store]`.
    var wires: [[EntityIsolationTests.Wire]] = []
    /// `listeners[user][store]`: subscribed connections recording the classes their events name.
    var listeners: [[EventRecorder]] = []
    var random: SeededGenerator
    var world = World()
    /// Every id ever made, in any class and store: what attackers reuse.
    var pool: [UUID] = []
    /// What each user could read at some point (their history may name only these).
    var everReadable: [UUID: Set<Key>] = [:]
    var step = 0
    /// Every action so far, for the failure message.
    var journal: [String] = []
    /// How the actions were answered (`ok` or the error code), and how many refusals of hidden rows were
    /// compared with the answer for an absent one.
    var tally: [String: Int] = [:]
    var twinsCompared = 0
    var mostShares = 0
    let logger = Logger(label: "pgmodel.test.adversarial")

    init(seed: UInt64, users: [AuthenticatedUser], stores: [String], ports: [Int], trusted: PostgresConnection) async throws {
        self.seed = seed
        self.users = users
        self.stores = stores
        self.trusted = trusted
        random = SeededGenerator(state: seed)
        for user in users {
            var mine: [EntityIsolationTests.Wire] = []
            var listening: [EventRecorder] = []
            for port in ports {
                mine.append(try await Self.login(user, port))
                let listener = try await Self.login(user, port)
                let subscribed = try await listener.send(#""op":"subscribe""#)
                try #require(subscribed.ok == true, "\(subscribed)")
                listening.append(EventRecorder(listener.client))
            }
            wires.append(mine)
            listeners.append(listening)
        }
    }

    static func login(_ user: AuthenticatedUser, _ port: Int) async throws -> EntityIsolationTests.Wire {
        let client = try await RawProtocolClient.connect(port: port)
        let hello = try await RawProtocolTests.hello(client, user.name, "secret")
        try #require(hello.ok == true, "\(hello)")
        let wire = EntityIsolationTests.Wire(client, user.name)
        let registered = try await wire.send(#""op":"register","schema":\#(EntityIsolationTests.schemaJSON)"#)
        try #require(registered.ok == true, "\(registered)")
        return wire
    }

    func close() async {
        for wire in wires.joined() { await wire.client.close() }
        for listener in listeners.joined() { await listener.close() }
    }

    // MARK: Playing

    /// Plays `steps` random actions; the first disagreement with the model, or nil.
    mutating func play(steps: Int) async throws -> String? {
        try await furnish()
        try await refreshTruth()
        world.shares = try await World.readShares(stores: stores, on: trusted, logger: logger)
        if let failure = try await checkViews() { return "after the owners' first saves: \(failure)" }
        for index in 0..<steps {
            step = index
            let actor = Int.random(in: 0..<users.count, using: &random)
            let store = Int.random(in: 0..<stores.count, using: &random)
            if let failure = try await act(actor, store) { return "step \(index), user \(actor), store \(store): \(failure)\(trace(failure))" }
            if let failure = try await checkViews() { return "after step \(index): \(failure)\(trace(failure))" }
            if index % 20 == 19 || index == steps - 1, let failure = try await checkHistory() {
                return "after step \(index): \(failure)\(trace(failure))"
            }
        }
        return checkEvents()
    }

    /// What owners make before the attacks: in each store, each user's two trips, each with a stop, a
    /// cover photo and a supply, and a note; one trip shared read-only and one read-write with others.
    mutating func furnish() async throws {
        for (index, user) in users.enumerated() {
            for store in stores.indices {
                var inserts: [String] = []
                var links: [String] = []
                var shares: [String] = []
                for number in 0..<2 {
                    let trip = UUID.v7(), stop = UUID.v7(), photo = UUID.v7(), supply = UUID.v7()
                    pool += [trip, stop, photo, supply]
                    inserts.append(#"{"entity":"Photo","id":"\#(Self.json(photo))","values":{"caption":"p\#(index)\#(number)"}}"#)
                    inserts.append(#"{"entity":"Trip","id":"\#(Self.json(trip))","values":{"name":"t\#(index)\#(number)","cover":"\#(Self.json(photo))"}}"#)
                    inserts.append(#"{"entity":"Stop","id":"\#(Self.json(stop))","values":{"name":"s\#(index)\#(number)","trip":"\#(Self.json(trip))"}}"#)
                    inserts.append(#"{"entity":"Supply","id":"\#(Self.json(supply))","values":{"item":"v\#(index)\#(number)","stop":"\#(Self.json(stop))"}}"#)
                    links.append(#"{"entity":"Trip","relationship":"supplies","source":"\#(Self.json(trip))","destination":"\#(Self.json(supply))","isAdded":true}"#)
                    let grantee = (index + 1 + Int.random(in: 0..<(users.count - 1), using: &random)) % users.count
                    shares.append(#"{"entity":"Trip","id":"\#(Self.json(trip))","user":"\#(users[grantee].name)","permission":"\#(number == 0 ? "readOnly" : "readWrite")"}"#)
                }
                let note = UUID.v7()
                pool.append(note)
                inserts.append(#"{"entity":"Note","id":"\#(Self.json(note))","values":{"text":"n\#(index)"}}"#)
                let saved = try await wires[index][store].save(#""inserts":[\#(inserts.joined(separator: ","))],"links":[\#(links.joined(separator: ","))],"shares":[\#(shares.joined(separator: ","))]"#)
                try #require(saved.ok == true, "user \(user.name) furnishing store \(store): \(saved)")
            }
        }
    }

    /// One line on what the seed did, for the test's output.
    var summary: String {
        let answers = tally.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "\(step + 1) steps by \(users.count) users in \(stores.count) stores: \(answers); \(twinsCompared) hidden-row refusals compared with absent rows; at most \(mostShares) shares in force"
    }

    /// The actions that named the ids (their first 8 characters) a failure names.
    func trace(_ failure: String) -> String {
        let ids = Set(failure.matches(of: /[0-9A-F]{8}/).map { String($0.output) })
        let lines = journal.filter { line in ids.contains { line.contains($0) } }
        return lines.isEmpty ? "" : "\nactions naming those ids:\n" + lines.suffix(30).joined(separator: "\n")
    }

    /// The truth's rows and links, with the model's shares.
    mutating func refreshTruth() async throws {
        let (rows, links) = try await World.read(stores: stores, on: trusted, logger: logger)
        world.rows = rows
        world.links = links
    }

    mutating func choose<T>(_ items: [T]) -> T? { items.randomElement(using: &random) }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    /// An id for an action: one the actor can read (so permitted actions happen), any id of any class
    /// and store, or a fresh one.
    mutating func targetID(_ actor: Int, _ store: Int, _ table: Table) -> UUID {
        let me = users[actor].id
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 60, let key = choose(world.readable(by: me).filter { $0.store == store && $0.table == table }.sorted()) { return key.id }
        if roll < 92, let id = choose(pool) { return id }
        return UUID.v7()
    }

    /// A reference for an action: to a row the actor can read, any row of that class in the store, any id
    /// at all, or a fresh one.
    mutating func referenceID(_ actor: Int, _ store: Int, _ table: Table) -> UUID {
        let me = users[actor].id
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 45, let key = choose(world.readable(by: me).filter { $0.store == store && $0.table == table }.sorted()) { return key.id }
        if roll < 75, let key = choose(world.rows.keys.filter { $0.store == store && $0.table == table }.sorted()) { return key.id }
        if roll < 92, let id = choose(pool) { return id }
        return UUID.v7()
    }

    static func json(_ id: UUID) -> String { id.uuidString.lowercased() }

    // MARK: One action

    /// Runs one random action and checks its answer and the database against the model.
    mutating func act(_ actor: Int, _ store: Int) async throws -> String? {
        let before = world
        let me = users[actor].id
        let wire = wires[actor][store]
        let table = choose(Table.allCases) ?? .note
        let roll = Int.random(in: 0..<100, using: &random)
        var expected = before
        var outcome: Outcome
        var what: String
        // The request for a row that does not exist, whose answer a refusal of a hidden row must equal.
        var twin: Twin?
        if roll < 25 {
            // Insert, with an id of any class or store (or a fresh one) and maybe a reference.
            var id = chance(50) ? UUID.v7() : (choose(pool) ?? UUID.v7())
            if before.rows[Key(store: store, table: table, id: id)]?.owner == me { id = UUID.v7() }
            let text = "s\(step)"
            var values = #""\#(table.text)":"\#(text)""#
            var reference: UUID?
            if let ref = table.reference, chance(70) {
                reference = referenceID(actor, store, ref.destination)
                values += #","\#(ref.name)":"\#(Self.json(reference ?? UUID()))""#
            }
            what = "insert \(table.entity) \(id.uuidString.suffix(8)) ref \(reference.map { String($0.uuidString.suffix(8)) } ?? "none")"
            let request = #""inserts":[{"entity":"\#(table.entity)","id":"\#(Self.json(id))","values":{\#(values)}}]"#
            let key = Key(store: store, table: table, id: id)
            let target = reference.flatMap { ref in table.reference.map { Key(store: store, table: $0.destination, id: ref) } }
            if let target, !before.canRead(me, target) {
                outcome = .refused("constraint_violation")
                if before.rows[target] != nil { twin = .save(request.replacingOccurrences(of: Self.json(target.id), with: Self.json(UUID.v7()))) }
            } else if let target, table == .stop, let parent = before.rows[target], parent.owner != me {
                // A child of another owner's trip is that owner's, and needs a read-write share of it.
                if before.canWrite(me, target) {
                    outcome = .ok
                    expected.rows[key] = World.Row(owner: parent.owner, text: text, reference: reference)
                } else {
                    outcome = .refused("forbidden")
                }
            } else {
                outcome = .ok
                expected.rows[key] = World.Row(owner: me, text: text, reference: reference)
            }
            if before.rows[key] != nil {
                // The id is taken in this hierarchy: unique_violation, unless a refusal of the reference
                // came first (a check made before the row is written).
                if case .refused(let code) = outcome { outcome = .refusedWithAny(["unique_violation", code]) } else { outcome = .refused("unique_violation") }
                expected = before
                twin = nil
            }
            pool.append(id)
            let answer = try await wire.save(request)
            if let failure = try await settle(answer, outcome, expected, before: before, what: what, twin: twin, wire: wire) { return failure }
        } else if roll < 50 {
            // Update the text and maybe the reference of a row of this class. Sometimes the escalation an
            // attacker would try on purpose: a row they may write but do not own pointed, through an edge of
            // ownership, at a row they may only read.
            var id = targetID(actor, store, table)
            var escalation: UUID?
            if let ref = table.reference, table.referenceIsOwnership, chance(40),
               let row = choose(before.writableNotOwned(by: me, store, table)), let target = choose(before.readOnly(for: me, store, ref.destination)) {
                id = row.id
                escalation = target.id
            }
            let key = Key(store: store, table: table, id: id)
            let text = "u\(step)"
            var values = #""\#(table.text)":"\#(text)""#
            var reference: UUID??
            if let ref = table.reference, escalation != nil || chance(50) {
                let chosen: UUID? = escalation ?? (chance(12) ? nil : referenceID(actor, store, ref.destination))
                reference = .some(chosen)
                values += #","\#(ref.name)":\#(chosen.map { "\"\(Self.json($0))\"" } ?? "null")"#
            }
            what = "update \(key)"
            let request = #""updates":[{"entity":"\#(table.entity)","id":"\#(Self.json(id))","values":{\#(values)}}]"#
            if !before.canRead(me, key) {
                outcome = .refused("not_found")
                if before.rows[key] != nil { twin = .save(request.replacingOccurrences(of: Self.json(id), with: Self.json(UUID.v7()))) }
            } else if !before.canWrite(me, key) {
                outcome = .refused("forbidden")
            } else if case .some(.some(let ref)) = reference, let destination = table.reference?.destination, before.rows[key]?.reference != ref,
                      !before.canRead(me, Key(store: store, table: destination, id: ref)) {
                outcome = .refused("constraint_violation")
                if before.rows[Key(store: store, table: destination, id: ref)] != nil {
                    twin = .save(request.replacingOccurrences(of: Self.json(ref), with: Self.json(UUID.v7())))
                }
            } else if case .some(.some(let ref)) = reference, let destination = table.reference?.destination, table.referenceIsOwnership,
                      before.rows[key]?.owner != me, before.rows[key]?.reference != ref,
                      !before.canWrite(me, Key(store: store, table: destination, id: ref)) {
                // A read-only row never joins a read-write share; a read-only record gains no member.
                outcome = .refused("forbidden")
            } else {
                outcome = .ok
                expected.rows[key]?.text = text
                if case .some(let ref) = reference { expected.rows[key]?.reference = ref }
            }
            let answer = try await wire.save(request)
            if let failure = try await settle(answer, outcome, expected, before: before, what: what, twin: twin, wire: wire) { return failure }
        } else if roll < 57 {
            // Delete a row of this class.
            let id = targetID(actor, store, table)
            let key = Key(store: store, table: table, id: id)
            what = "delete \(key)"
            let answer = try await wire.save(#""deletes":[{"entity":"\#(table.entity)","id":"\#(Self.json(id))"}]"#)
            if !before.canRead(me, key) {
                // As for a row already gone: nothing happens.
                outcome = .ok
            } else if !before.canDelete(me, key) {
                outcome = .refused("forbidden")
            } else {
                outcome = .deleted(key)
            }
            if let failure = try await settle(answer, outcome, expected, before: before, what: what, twin: nil, wire: wire) { return failure }
        } else if roll < 70 {
            // Link or unlink a trip and a supply (`Trip.supplies`, `.cascade`).
            var trip = targetID(actor, store, .trip), supply = referenceID(actor, store, .supply)
            if chance(40) {
                // On purpose: a read-only supply into a trip they may write, or their supply into a read-only trip.
                let writableTrips = before.rows.keys.filter { $0.store == store && $0.table == .trip && before.canWrite(me, $0) }.sorted()
                let writableSupplies = before.rows.keys.filter { $0.store == store && $0.table == .supply && before.canWrite(me, $0) }.sorted()
                if chance(50), let t = choose(writableTrips), let v = choose(before.readOnly(for: me, store, .supply)) {
                    (trip, supply) = (t.id, v.id)
                } else if let t = choose(before.readOnly(for: me, store, .trip)), let v = choose(writableSupplies) {
                    (trip, supply) = (t.id, v.id)
                }
            }
            let tripKey = Key(store: store, table: .trip, id: trip), supplyKey = Key(store: store, table: .supply, id: supply)
            let link = World.Link(store: store, trip: trip, supply: supply)
            let adding = chance(70)
            what = "\(adding ? "link" : "unlink") \(tripKey) and \(supplyKey)"
            let request = #""links":[{"entity":"Trip","relationship":"supplies","source":"\#(Self.json(trip))","destination":"\#(Self.json(supply))","isAdded":\#(adding)}]"#
            if adding {
                if before.canWrite(me, tripKey) && before.canWrite(me, supplyKey) {
                    outcome = .ok
                    expected.links.insert(link)
                } else {
                    outcome = .refused("forbidden")
                    if !before.canRead(me, supplyKey), before.rows[supplyKey] != nil {
                        twin = .save(request.replacingOccurrences(of: Self.json(supply), with: Self.json(UUID.v7())))
                    } else if !before.canRead(me, tripKey), before.rows[tripKey] != nil {
                        twin = .save(request.replacingOccurrences(of: Self.json(trip), with: Self.json(UUID.v7())))
                    }
                }
            } else if before.links.contains(link), before.canRead(me, tripKey), before.canRead(me, supplyKey), before.canWrite(me, tripKey) {
                outcome = .ok
                expected.links.remove(link)
            } else {
                // Nothing to remove, or not theirs to remove: nothing changes, whatever the answer.
                outcome = .unchanged
            }
            let answer = try await wire.save(request)
            if let failure = try await settle(answer, outcome, expected, before: before, what: what, twin: twin, wire: wire) { return failure }
        } else {
            // Share or revoke, mostly the actor's own rows, sometimes anything.
            let own = before.rows.filter { $0.key.store == store && $0.value.owner == me }.keys.sorted()
            let key: Key
            if chance(80), let mine = choose(own) { key = mine } else { key = Key(store: store, table: table, id: targetID(actor, store, table)) }
            // Mostly someone else: sharing with oneself is a plain invalid_field.
            let grantee = chance(92) ? (actor + Int.random(in: 1..<users.count, using: &random)) % users.count : actor
            let unknownName = chance(5)
            let granteeName = unknownName ? "nobody-\(UUID.v7().uuidString.suffix(8))" : users[grantee].name
            let revoke = chance(20)
            let readWrite = chance(50)
            what = "\(revoke ? "unshare" : "share") \(key) with user \(unknownName ? "unknown" : "\(grantee)")\(revoke ? "" : readWrite ? " readWrite" : " readOnly")"
            let request = revoke
                ? #""op":"unshare","entity":"\#(key.table.entity)","rowID":"\#(Self.json(key.id))","user":"\#(granteeName)""#
                : #""op":"share","entity":"\#(key.table.entity)","rowID":"\#(Self.json(key.id))","user":"\#(granteeName)","permission":"\#(readWrite ? "readWrite" : "readOnly")""#
            if !before.canRead(me, key) {
                outcome = .refused("not_found")
                if before.rows[key] != nil { twin = .op(request.replacingOccurrences(of: Self.json(key.id), with: Self.json(UUID.v7()))) }
            } else if before.rows[key]?.owner != me {
                outcome = .refused("forbidden")
            } else if unknownName {
                outcome = .refused("not_found")
            } else if grantee == actor {
                outcome = .refused("invalid_field")
            } else {
                outcome = .ok
                let shareKey = World.ShareKey(store: store, table: key.table, id: key.id, grantee: users[grantee].id)
                expected.shares[shareKey] = revoke ? nil : World.Share(owner: me, readWrite: readWrite)
            }
            let answer = try await wire.send(request)
            if let failure = try await settle(answer, outcome, expected, before: before, what: what, twin: twin, wire: wire) { return failure }
        }
        return nil
    }

    /// A request, as `save` members or a whole op's members.
    enum Twin {
        case save(String)
        case op(String)
    }

    enum Outcome {
        /// Succeeds, and the world becomes the expected one.
        case ok
        /// Fails with this code and changes nothing.
        case refused(String)
        /// Fails with one of these codes and changes nothing.
        case refusedWithAny([String])
        /// Whatever the answer, nothing changes.
        case unchanged
        /// Succeeds and deletes the row with (some of) what it owns through `.cascade`, or is refused for
        /// a row it would take that the user may not delete, changing nothing.
        case deleted(Key)
    }

    /// Checks an answer and the database after it.
    mutating func settle(_ answer: RawResponse, _ outcome: Outcome, _ expected: World, before: World, what: String,
                         twin: Twin?, wire: EntityIsolationTests.Wire) async throws -> String? {
        journal.append("step \(step), user \(userIndex(wire)): \(what) → \(answer.ok == true ? "ok" : answer.code ?? "?")")
        tally[answer.ok == true ? "ok" : answer.code ?? "?", default: 0] += 1
        mostShares = max(mostShares, world.shares.count)
        try await refreshTruth()
        let truthShares = try await World.readShares(stores: stores, on: trusted, logger: logger)
        switch outcome {
        case .ok:
            guard answer.ok == true else { return "\(what): expected success, got \(answer.text)" }
            world.shares = expected.shares
            if world.rows != expected.rows { return "\(what): rows differ from the model: \(difference(expected.rows, world.rows))" }
            if world.links != expected.links { return "\(what): links differ from the model" }
        case .refused(let code):
            guard answer.ok == false, answer.code == code else { return "\(what): expected \(code), got \(answer.text)" }
            if world.rows != before.rows || world.links != before.links {
                return "\(what): a refused request changed the database: \(difference(before.rows, world.rows))"
            }
            if let twin {
                // The same request for a row that does not exist: the same answer, word for word.
                let other: RawResponse
                switch twin {
                case .save(let members): other = try await wire.save(members)
                case .op(let members): other = try await wire.send(members)
                }
                twinsCompared += 1
                if Self.scrubbed(answer) != Self.scrubbed(other) {
                    return "\(what): a hidden row answers differently from an absent one: \(answer.text) vs \(other.text)"
                }
                try await refreshTruth()
            }
        case .refusedWithAny(let codes):
            guard answer.ok == false, let code = answer.code, codes.contains(code) else { return "\(what): expected one of \(codes), got \(answer.text)" }
            if world.rows != before.rows || world.links != before.links {
                return "\(what): a refused request changed the database: \(difference(before.rows, world.rows))"
            }
        case .unchanged:
            if world.rows != before.rows || world.links != before.links { return "\(what): changed the database: \(answer.text)" }
        case .deleted(let key):
            let gone = Set(before.rows.keys).subtracting(world.rows.keys)
            if answer.ok == true {
                guard gone.contains(key) else { return "\(what): succeeded but the row is still there" }
                let allowed = before.descendants(of: key).union([key])
                if let extra = gone.subtracting(allowed).sorted().first { return "\(what): also deleted \(extra)" }
                var after = before
                after.forget(gone)
                world.shares = after.shares
            } else {
                // Refused only for what it would take that the user may not delete.
                let blocked = before.descendants(of: key).contains { !before.canDelete(users[userIndex(wire)].id, $0) }
                guard answer.code == "forbidden", blocked else { return "\(what): expected success, got \(answer.text)" }
                if !gone.isEmpty { return "\(what): a refused delete deleted \(gone.sorted())" }
            }
        }
        if truthShares != world.shares {
            let missing = world.shares.keys.filter { truthShares[$0] != world.shares[$0] }.sorted()
            let extra = truthShares.keys.filter { world.shares[$0] == nil }.sorted()
            return "\(what): pgmodel.shares differs from what owners made: missing or changed \(missing), extra \(extra)"
        }
        return nil
    }

    func userIndex(_ wire: EntityIsolationTests.Wire) -> Int {
        users.firstIndex { $0.name == wire.name } ?? 0
    }

    /// An answer without ids and request ids: what a caller learns from it.
    static func scrubbed(_ answer: RawResponse) -> String {
        let error = answer.error ?? [:]
        let text = ["code", "message", "sqlState", "field", "model", "keyPath"].map { "\($0)=\(error[$0] ?? "-")" }.joined(separator: " ")
        return text.replacingOccurrences(of: "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
                                         with: "<id>", options: .regularExpression)
    }

    func difference(_ expected: [Key: World.Row], _ actual: [Key: World.Row]) -> String {
        let keys = Set(expected.keys).union(actual.keys).filter { expected[$0] != actual[$0] }.sorted()
        return keys.prefix(4).map { "\($0): expected \(expected[$0].map { "\($0)" } ?? "none"), found \(actual[$0].map { "\($0)" } ?? "none")" }
            .joined(separator: "; ")
    }

    // MARK: What each user sees

    /// Every user's fetch of every class in every store equals what the model says they can read. The
    /// users are asked at once, each on their own connections.
    mutating func checkViews() async throws -> String? {
        var expectations: [[Int: [Table: [UUID: String?]]]] = []
        for user in users {
            let readable = world.readable(by: user.id)
            everReadable[user.id, default: []].formUnion(readable)
            var byStore: [Int: [Table: [UUID: String?]]] = [:]
            for store in stores.indices {
                for table in Table.allCases { byStore[store, default: [:]][table] = [:] }
            }
            for key in readable { byStore[key.store, default: [:]][key.table, default: [:]][key.id] = world.rows[key]?.text }
            expectations.append(byStore)
        }
        let wires = self.wires
        let storeCount = stores.count
        return try await withThrowingTaskGroup(of: String?.self) { group in
            for (index, expected) in expectations.enumerated() {
                group.addTask {
                    for store in 0..<storeCount {
                        for table in Table.allCases {
                            let answer = try await wires[index][store].send(#""op":"fetch","entity":"\#(table.entity)""#)
                            guard answer.ok == true else { return "user \(index) fetching \(table.entity) in store \(store): \(answer.text)" }
                            var seen: [UUID: String?] = [:]
                            for row in answer.rows ?? [] {
                                guard let text = row["id"] as? String, let id = UUID(uuidString: text) else { continue }
                                seen[id] = (row["values"] as? [String: Any])?[table.text] as? String
                            }
                            let wanted = expected[store]?[table] ?? [:]
                            if seen != wanted {
                                let extra = Set(seen.keys).subtracting(wanted.keys).map { Key(store: store, table: table, id: $0) }.sorted()
                                let missing = Set(wanted.keys).subtracting(seen.keys).map { Key(store: store, table: table, id: $0) }.sorted()
                                return "user \(index) sees \(table.entity) rows of store \(store) the model does not give them: extra \(extra), missing \(missing), or other values"
                            }
                        }
                    }
                    return nil
                }
            }
            for try await failure in group {
                if let failure {
                    group.cancelAll()
                    return failure
                }
            }
            return nil
        }
    }

    /// Every user's history in every store names only rows they could read at some point.
    func checkHistory() async throws -> String? {
        for (index, user) in users.enumerated() {
            let allowed = everReadable[user.id] ?? []
            for store in stores.indices {
                let answer = try await wires[index][store].send(#""op":"history","history":{"limit":10000}"#)
                guard answer.ok == true else { return "user \(index) reading history of store \(store): \(answer.text)" }
                let transactions = (answer.object["history"] as? [String: Any])?["transactions"] as? [[String: Any]] ?? []
                for change in transactions.flatMap({ $0["changes"] as? [[String: Any]] ?? [] }) {
                    guard let entity = change["entity"] as? String, let table = Table.allCases.first(where: { $0.entity == entity }),
                          let text = change["id"] as? String, let id = UUID(uuidString: text) else { continue }
                    let key = Key(store: store, table: table, id: id)
                    if !allowed.contains(key) {
                        return "user \(index)'s history of store \(store) names \(key) (\(change["kind"] ?? "?")), which they never could read"
                    }
                }
            }
        }
        return nil
    }

    /// Every change event names only classes of which the user could read a row in that store.
    func checkEvents() -> String? {
        for (index, user) in users.enumerated() {
            let allowed = everReadable[user.id] ?? []
            for store in stores.indices {
                let classes = Set(allowed.filter { $0.store == store }.map(\.table.entity))
                for named in listeners[index][store].entities() where !named.isSubset(of: classes) {
                    return "user \(index) got a change event in store \(store) naming \(named.sorted()), but could only ever read \(classes.sorted())"
                }
            }
        }
        return nil
    }
}

/// Reads a subscribed connection's lines in the background and keeps the classes each change event
/// names (an event without names means "anything" and says nothing about rows).
final class EventRecorder: Sendable {
    private let client: RawProtocolClient
    private let named = NIOLockedValueBox<[Set<String>]>([])
    private let reader = NIOLockedValueBox<Task<Void, Never>?>(nil)

    init(_ client: RawProtocolClient) {
        self.client = client
        let named = self.named
        reader.withLockedValue { task in
            task = Task {
                while let line = try? await client.readLine(timeout: .hours(1)) {
                    guard let event = try? RawResponse(line), event.object["event"] as? String == "changes",
                          let entities = event.object["entities"] as? [String], !entities.isEmpty else { continue }
                    named.withLockedValue { $0.append(Set(entities)) }
                }
            }
        }
    }

    func entities() -> [Set<String>] { named.withLockedValue { $0 } }

    func close() async {
        await client.close()
        let task = reader.withLockedValue { $0 }
        await task?.value
    }
}

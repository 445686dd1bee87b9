import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import PGModelTestSupport
import Testing

/// Many random shares, revocations, inserts, deletes and forbidden attempts by several users; after
/// every step each user's fetches are compared with a plain-Swift model of who may see what.
@Suite("Sharing: randomized steps against a model of who sees what")
struct SharingRandomizedTests {
    /// What the test believes: owners, shares and waypoints.
    struct Model {
        var expeditionOwner: [UUID: Int] = [:]
        var shares: [UUID: [Int: SharePermission]] = [:]   // expedition → user → permission
        var waypoints: [UUID: UUID] = [:]                 // waypoint → expedition

        func canRead(_ user: Int, _ expedition: UUID) -> Bool {
            expeditionOwner[expedition] == user || shares[expedition]?[user] != nil
        }

        func canWrite(_ user: Int, _ expedition: UUID) -> Bool {
            expeditionOwner[expedition] == user || shares[expedition]?[user] == .readWrite
        }

        func visibleExpeditions(_ user: Int) -> Set<UUID> { Set(expeditionOwner.keys.filter { canRead(user, $0) }) }
        func visibleWaypoints(_ user: Int) -> Set<UUID> { Set(waypoints.filter { canRead(user, $0.value) }.keys) }
    }

    /// A seeded generator, so a failing run can be repeated (the seed is in the failure message).
    typealias Generator = SeededGenerator

    @Test("120 random steps by three users: every fetch matches the model")
    func randomSteps() async throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        let users = [try await ServerTestHarness.makeUser("r0"), try await ServerTestHarness.makeUser("r1"), try await ServerTestHarness.makeUser("r2")]
        // Non-owners' shares of records they cannot see are answered not_found on purpose, many times.
        try await SharingTests.withService(configure: { $0.shareProbeThrottle = .disabled }) { port, _ in
            var stores: [RemoteModelStore] = []
            for user in users { stores.append(try await SharingTests.store(user, port)) }
            defer { let all = stores; Task { for store in all { await store.close() } } }
            var random = Generator(state: seed)
            var model = Model()
            let token = "r" + ServerTestHarness.uniqueSuffix()
            // Each user starts with two expeditions of one waypoint each.
            for (index, store) in stores.enumerated() {
                for _ in 0..<2 {
                    let expedition = UUID.v7(), waypoint = UUID.v7()
                    _ = try await store.save(SaveRequest(inserts: [
                        RowValues(entity: "Expedition", id: expedition, values: ["code": .string("\(token)-\(expedition)"), "title": .string("t")]),
                        RowValues(entity: "Waypoint", id: waypoint, values: ["name": .string("\(token)-\(waypoint)"), "expedition": .uuid(expedition)]),
                    ]))
                    model.expeditionOwner[expedition] = index
                    model.waypoints[waypoint] = expedition
                }
            }
            let expeditions = model.expeditionOwner.keys.sorted { $0.uuidString < $1.uuidString }
            for step in 0..<120 {
                let actor = Int.random(in: 0..<users.count, using: &random)
                let store = stores[actor]
                let expedition = expeditions.randomElement(using: &random)!
                let owner = model.expeditionOwner[expedition]!
                let context = "seed \(seed), step \(step), user \(actor)"
                switch Int.random(in: 0..<6, using: &random) {
                case 0, 1:
                    // Share (or change the permission): only the owner may.
                    let grantee = (owner + Int.random(in: 1..<users.count, using: &random)) % users.count
                    let permission: SharePermission = Bool.random(using: &random) ? .readOnly : .readWrite
                    let outcome = await SharingTests.code {
                        _ = try await store.save(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Expedition", id: expedition), user: users[grantee].name, permission: permission)]))
                    }
                    if actor == owner {
                        #expect(outcome == nil, "\(context)")
                        model.shares[expedition, default: [:]][grantee] = permission
                    } else {
                        #expect(outcome == (model.canRead(actor, expedition) ? .forbidden : .notFound), "\(context)")
                    }
                case 2:
                    // Revoke someone's share.
                    let grantee = (owner + Int.random(in: 1..<users.count, using: &random)) % users.count
                    let outcome = await SharingTests.code {
                        _ = try await store.save(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Expedition", id: expedition), user: users[grantee].name, permission: nil)]))
                    }
                    if actor == owner {
                        #expect(outcome == nil, "\(context)")
                        model.shares[expedition]?[grantee] = nil
                    } else {
                        #expect(outcome == (model.canRead(actor, expedition) ? .forbidden : .notFound), "\(context)")
                    }
                case 3:
                    // Add a waypoint: the owner and read-write grantees may; it belongs to the owner.
                    let waypoint = UUID.v7()
                    let outcome = await SharingTests.code {
                        _ = try await store.save(SaveRequest(inserts: [
                            RowValues(entity: "Waypoint", id: waypoint, values: ["name": .string("\(token)-\(waypoint)"), "expedition": .uuid(expedition)])]))
                    }
                    if model.canWrite(actor, expedition) {
                        #expect(outcome == nil, "\(context)")
                        model.waypoints[waypoint] = expedition
                    } else {
                        #expect(outcome == (model.canRead(actor, expedition) ? .forbidden : .constraintViolation), "\(context)")
                    }
                case 4:
                    // Delete a waypoint of the expedition.
                    guard let waypoint = model.waypoints.filter({ $0.value == expedition }).keys.sorted(by: { $0.uuidString < $1.uuidString }).first else { continue }
                    let outcome = await SharingTests.code {
                        _ = try await store.save(SaveRequest(deletes: [RowReference(entity: "Waypoint", id: waypoint)]))
                    }
                    if model.canWrite(actor, expedition) {
                        #expect(outcome == nil, "\(context)")
                        model.waypoints[waypoint] = nil
                    } else {
                        // Read-only: forbidden. Invisible: nothing happens, as for a row already gone.
                        #expect(outcome == (model.canRead(actor, expedition) ? .forbidden : nil), "\(context)")
                    }
                default:
                    // Rename the expedition.
                    let outcome = await SharingTests.code {
                        _ = try await store.save(SaveRequest(updates: [RowValues(entity: "Expedition", id: expedition, values: ["title": .string("s\(step)")])]))
                    }
                    let expected: PGModelError.Code? = model.canWrite(actor, expedition) ? nil : model.canRead(actor, expedition) ? .forbidden : .notFound
                    #expect(outcome == expected, "\(context)")
                }
                for (index, user) in stores.enumerated() {
                    let seenExpeditions = Set(try await user.fetchIdentifiers(FetchRequest(entity: "Expedition",
                        predicate: .string(.startsWith, .key("code"), .value(.string(token))))).map(\.id))
                    #expect(seenExpeditions == model.visibleExpeditions(index), "expeditions of user \(index) after \(context)")
                    let seenWaypoints = Set(try await user.fetchIdentifiers(FetchRequest(entity: "Waypoint",
                        predicate: .string(.startsWith, .key("name"), .value(.string(token))))).map(\.id))
                    #expect(seenWaypoints == model.visibleWaypoints(index), "waypoints of user \(index) after \(context)")
                }
            }
        }
    }
}

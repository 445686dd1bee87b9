import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import Testing

/// The instance's one reader of change events: one history read per round, however many users and
/// connections subscribed, and each connection told only what its user may see.
extension ServerHistoryTests {
    /// Logs `client` in as `user` and subscribes it as request 7.
    static func subscribed(_ user: AuthenticatedUser, port: Int) async throws -> RawProtocolClient {
        let client = try await RawProtocolClient.connect(port: port)
        #expect(try await RawProtocolTests.hello(client, user.name, "secret").ok == true)
        #expect(try await client.request(#"{"id":7,"op":"subscribe"}"#).ok == true)
        return client
    }

    /// Raw event lines from `client` until one names `entity`; every line read is returned.
    static func linesUntilEvent(_ client: RawProtocolClient, about entity: String) async throws -> [String] {
        var lines: [String] = []
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let line = try await client.readLine(timeout: .seconds(15))
            lines.append(line)
            let named = try RawResponse(line).object["entities"] as? [String] ?? []
            if named.contains(entity) { return lines }
        }
        throw Timeout(description: "no event about \(entity) within 15 s")
    }

    @Test("connections of several users share one history read a round; each is told the save")
    func oneReadPerUserAndRound() async throws {
        let connections = 6
        let alice = try await ServerTestHarness.makeUser("fan")
        let bob = try await ServerTestHarness.makeUser("fanb")
        let entity = ServerTestHarness.uniqueEntity("Fanout")
        try await ServerTestHarness.withRunningServer { server, port in
            var subscribed: [RawProtocolClient] = []
            for _ in 0..<connections { subscribed.append(try await Self.subscribed(alice, port: port)) }
            let clients = subscribed
            let bobs = try await Self.subscribed(bob, port: port)
            defer { Task { for client in clients + [bobs] { await client.close() } } }
            #expect(server.signalForwarderCount == connections + 1)

            let reads = server.visibilityReadCount
            let rounds = server.visibilityRoundCount
            _ = try await Self.save(entity, as: alice, port: port)
            for client in clients { _ = try await Self.nextEvent(client, about: entity) }
            // Saves elsewhere in the database ring too, so count rounds: each reads once for alice (all
            // her connections) and bob together, never once per user or connection.
            try await Self.eventually("one read for each round") {
                let madeRounds = server.visibilityRoundCount - rounds
                return madeRounds >= 1 && server.visibilityReadCount - reads == madeRounds
            }
        }
    }

    @Test("connections of two users are told only their own and shared changes")
    func fannedOutEventsStayIsolated() async throws {
        let alice = try await ServerTestHarness.makeUser("fiso")
        let bob = try await ServerTestHarness.makeUser("fisob")
        let alices = ServerTestHarness.uniqueEntity("AliceOnly")
        let bobs = ServerTestHarness.uniqueEntity("BobOnly")
        let shared = ServerTestHarness.uniqueEntity("Shared")
        let marker = ServerTestHarness.uniqueEntity("BobMarker")
        try await ServerTestHarness.withRunningServer { server, port in
            let aliceClients = [try await Self.subscribed(alice, port: port), try await Self.subscribed(alice, port: port)]
            let bobClients = [try await Self.subscribed(bob, port: port), try await Self.subscribed(bob, port: port)]
            defer { Task { for client in aliceClients + bobClients { await client.close() } } }

            // Bob's private row, then a row he shares with alice and updates, then alice's own row.
            let bobsRow = try await Self.save(bobs, as: bob, port: port)
            let sharedRow = try await Self.save(shared, as: bob, port: port)
            let writer = try await RawProtocolClient.connect(port: port)
            defer { Task { await writer.close() } }
            #expect(try await RawProtocolTests.hello(writer, bob.name, "secret").ok == true)
            let share = try await writer.request(
                #"{"id":2,"op":"share","entity":"\#(shared)","rowID":"\#(sharedRow.uuidString.lowercased())","user":"\#(alice.name)","permission":"readOnly"}"#)
            #expect(share.ok == true, "\(share)")
            let update = try await writer.request(
                #"{"id":3,"op":"save","updates":[{"entity":"\#(shared)","id":"\#(sharedRow.uuidString.lowercased())","values":{"rank":2}}]}"#)
            #expect(update.ok == true, "\(update)")
            let alicesRow = try await Self.save(alices, as: alice, port: port)

            for client in aliceClients {
                // Alice hears of the shared row and of her own, never of Bob's private one.
                var lines = try await Self.linesUntilEvent(client, about: alices)
                if !lines.contains(where: { $0.contains(shared) }) {
                    lines += try await Self.linesUntilEvent(client, about: shared)
                }
                for line in lines {
                    #expect(!line.contains(bobs), "Bob's private entity reached alice: \(line)")
                    #expect(!line.lowercased().contains(bobsRow.uuidString.lowercased()), "Bob's private row reached alice: \(line)")
                }
            }
            // A save of Bob's after alice's: whatever Bob's connections were told of alice's save came before it.
            _ = try await Self.save(marker, as: bob, port: port)
            for client in bobClients {
                let lines = try await Self.linesUntilEvent(client, about: marker)
                #expect(lines.contains { $0.contains(bobs) } && lines.contains { $0.contains(shared) }, "\(lines)")
                for line in lines {
                    #expect(!line.contains(alices), "alice's entity reached Bob: \(line)")
                    #expect(!line.lowercased().contains(alicesRow.uuidString.lowercased()), "alice's row reached Bob: \(line)")
                }
            }
            #expect(server.signalForwarderCount == 4)
        }
    }
}

import Foundation
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import Testing

@_spi(PGModelInternals) @testable import PGModel

/// History and the change doorbell over real TCP: raw protocol lines and the Swift client.
@Suite("Server: history and change subscriptions")
struct ServerHistoryTests {
    struct Timeout: Error, CustomStringConvertible {
        var description: String
    }

    /// A second client saves one row of `entity` as `user`; returns its id.
    static func save(_ entity: String, as user: AuthenticatedUser, port: Int, code: String = "c") async throws -> UUID {
        let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
        try await ServerTestHarness.register(ServerRemoteStoreTests.schema(entity))
        try await store.prepare(ServerRemoteStoreTests.schema(entity))
        let row = ServerRemoteStoreTests.row(entity, "\(code)_\(ServerTestHarness.uniqueSuffix())", rank: 1)
        _ = try await store.save(SaveRequest(inserts: [row], author: "history-test"))
        await store.close()
        return row.id
    }

    /// The next event line about `entity` (other tests save in the same schema; their events are skipped).
    static func nextEvent(_ client: RawProtocolClient, about entity: String) async throws -> RawResponse {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let line = try RawResponse(try await client.readLine(timeout: .seconds(15)))
            guard line.object["event"] != nil else {
                Issue.record("expected an event line, got \(line)")
                continue
            }
            // A `reconnected` event (the server's listener took effect) only asks for a catch-up.
            if line.object["event"] as? String == "reconnected" { continue }
            let entities = line.object["entities"] as? [String] ?? []
            if entities.isEmpty || entities.contains(entity) { return line }
        }
        throw Timeout(description: "no event about \(entity) within 15 s")
    }

    /// Sends `json` and returns the response with id `id`, skipping event lines written before it.
    static func request(_ client: RawProtocolClient, _ json: String, id: Int) async throws -> RawResponse {
        try await client.sendLine(json)
        while true {
            let line = try RawResponse(try await client.readLine())
            if line.object["event"] == nil {
                #expect(line.idNumber == id, "\(line)")
                return line
            }
        }
    }

    /// Whether `stream` finishes within `timeout` (its remaining signals are drained).
    static func finishes(_ stream: AsyncStream<ChangeSignal>, within timeout: Duration) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in stream {}
                return true
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
    }

    /// The first signal of `stream` satisfying `predicate`, or a ``Timeout`` failure; never hangs.
    static func firstSignal(
        _ stream: AsyncStream<ChangeSignal>, timeout: Duration = .seconds(15),
        where predicate: @escaping @Sendable (ChangeSignal) -> Bool
    ) async throws -> ChangeSignal {
        try await withThrowingTaskGroup(of: ChangeSignal?.self) { group in
            group.addTask {
                for await signal in stream where predicate(signal) { return signal }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Timeout(description: "no matching change signal within \(timeout)")
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let signal = first else {
                throw Timeout(description: "the signal stream finished before a matching signal")
            }
            return signal
        }
    }

    /// Waits until `condition` holds, failing after `timeout` (for effects of a peer's disconnect,
    /// which the server learns asynchronously). The bound is generous: the parallel suite keeps a
    /// small machine's cores and PostgreSQL busy, and only a failing run waits it out.
    static func eventually(
        _ what: String, timeout: Duration = .seconds(30), _ condition: @Sendable () -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw Timeout(description: "\(what) did not happen within \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("raw protocol: subscribe, another client saves → a changes event line; unsubscribe stops events")
    func rawSubscribe() async throws {
        let alice = try await ServerTestHarness.makeUser("sub")
        let bob = try await ServerTestHarness.makeUser("saver")
        let entity = ServerTestHarness.uniqueEntity("Doorbell")
        let bobs = ServerTestHarness.uniqueEntity("Private")
        try await ServerTestHarness.withRunningServer { server, port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await RawProtocolTests.hello(client, alice.name, "secret").ok == true)
            #expect(server.signalForwarderCount == 0)

            let subscribed = try await client.request(#"{"id":7,"op":"subscribe"}"#)
            #expect(subscribed.ok == true, "\(subscribed)")
            #expect(subscribed.object["subscription"] as? Int == 7)
            #expect(server.signalForwarderCount == 1)

            // Events follow visibility: Bob's save of his own rows is no news to Alice; her own save
            // through another client is.
            _ = try await Self.save(bobs, as: bob, port: port)
            _ = try await Self.save(entity, as: alice, port: port)
            var event: RawResponse?
            while event == nil {
                let line = try RawResponse(try await client.readLine(timeout: .seconds(15)))
                let named = line.object["entities"] as? [String] ?? []
                #expect(!named.contains(bobs), "an event about Bob's private save reached Alice: \(line)")
                if line.object["event"] as? String == "changes", named.contains(entity) { event = line }
            }
            guard let event else { return }
            #expect(event.object["event"] as? String == "changes")
            #expect(event.object["subscription"] as? Int == 7)
            #expect(event.object["ok"] == nil, "events are not responses")

            let unsubscribed = try await Self.request(client, #"{"id":8,"op":"unsubscribe","subscription":7}"#, id: 8)
            #expect(unsubscribed.ok == true, "\(unsubscribed)")
            #expect(server.signalForwarderCount == 0, "the last unsubscribe stops forwarding before it answers")

            // Events already written before the unsubscribe answer may still be in flight; skip them.
            // After the answer none may follow: the next line after a later save must be the pong.
            _ = try await Self.save(entity, as: alice, port: port)
            let pong = try await client.request(#"{"id":9,"op":"ping"}"#)
            #expect(pong.idNumber == 9, "no event after unsubscribe: \(pong)")

            let again = try await client.request(#"{"id":8,"op":"unsubscribe","subscription":7}"#)
            #expect(again.code == "not_found")
            #expect(again.field == "subscription")
        }
    }

    @Test("a closed connection stops forwarding: no subscription outlives its connection")
    func closeStopsForwarding() async throws {
        let alice = try await ServerTestHarness.makeUser("sub")
        try await ServerTestHarness.withRunningServer { server, port in
            var clients: [RawProtocolClient] = []
            for index in 0..<3 {
                let client = try await RawProtocolClient.connect(port: port)
                #expect(try await RawProtocolTests.hello(client, alice.name, "secret").ok == true)
                #expect(try await Self.request(client, #"{"id":\#(10 + index),"op":"subscribe"}"#, id: 10 + index).ok == true)
                // Events of the first subscription may come before this answer: skip them.
                #expect(try await Self.request(client, #"{"id":\#(20 + index),"op":"subscribe","entities":["Trip"]}"#, id: 20 + index).ok == true)
                clients.append(client)
            }
            #expect(server.signalForwarderCount == 3, "one forwarder per connection, however many subscriptions")
            for client in clients { await client.close() }
            try await Self.eventually("every forwarder ending") { server.signalForwarderCount == 0 }
        }
    }

    @Test("malformed and unauthorized history and subscription lines get typed errors")
    func typedErrors() async throws {
        let alice = try await ServerTestHarness.makeUser("errs")
        try await ServerTestHarness.withServer { port in
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            let early = try await client.request(#"{"id":1,"op":"subscribe"}"#)
            #expect(early.code == "not_authenticated")
            let earlyHistory = try await client.request(#"{"id":2,"op":"history","history":{}}"#)
            #expect(earlyHistory.code == "not_authenticated")
            #expect(try await RawProtocolTests.hello(client, alice.name, "secret", id: 3).ok == true)

            let cases: [(line: String, code: String, field: String?)] = [
                (#"{"id":4,"op":"history"}"#, "missing_field", "history"),
                (#"{"id":5,"op":"history","history":{"limit":"ten"}}"#, "invalid_field", "history.limit"),
                (#"{"id":6,"op":"history","history":{"where":{"token":{"op":"gt","value":"x"}}}}"#, "invalid_field", "history.where.token.value"),
                (#"{"id":7,"op":"history","history":{"where":{"all":true,"none":true}}}"#, "invalid_field", "history.where"),
                (#"{"id":8,"op":"deleteHistory"}"#, "missing_field", "history"),
                (#"{"id":9,"op":"subscribe","entities":"Trip"}"#, "invalid_field", "entities"),
                (#"{"id":10,"op":"subscribe","entities":[]}"#, "invalid_field", "entities"),
                (#"{"id":11,"op":"unsubscribe"}"#, "missing_field", "subscription"),
                (#"{"id":12,"op":"unsubscribe","subscription":99}"#, "not_found", "subscription"),
                (#"{"id":13,"op":"deleteHistory","history":{"where":{"all":true}}}"#, "forbidden", nil),
            ]
            for item in cases {
                let response = try await client.request(item.line)
                #expect(response.ok == false, "\(item.line) → \(response)")
                #expect(response.code == item.code, "\(item.line) → \(response)")
                #expect(response.field == item.field, "\(item.line) → \(response)")
            }
            #expect(try await client.request(#"{"id":14,"op":"subscribe"}"#).ok == true)
            let duplicate = try await Self.request(client, #"{"id":14,"op":"subscribe"}"#, id: 14)
            #expect(duplicate.code == "invalid_field")
            #expect(duplicate.field == "id")
        }
    }

    @Test("history returns the user's own transactions only: alice does not see bob's")
    func historyIsPerUser() async throws {
        let alice = try await ServerTestHarness.makeUser("alice")
        let bob = try await ServerTestHarness.makeUser("bob")
        let entity = ServerTestHarness.uniqueEntity("Diary")
        try await ServerTestHarness.withServer { port in
            let aliceRow = try await Self.save(entity, as: alice, port: port, code: "a")
            let bobRow = try await Self.save(entity, as: bob, port: port, code: "b")

            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
            defer { Task { await store.close() } }
            let page = try await store.fetchHistory(HistoryRequest(filter: .entities([entity])))
            let ids = Set(page.transactions.flatMap(\.changes).map(\.id))
            #expect(ids.contains(aliceRow), "alice sees her own insert")
            #expect(!ids.contains(bobRow), "alice does not see bob's insert")

            // The raw line has the documented shape.
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await RawProtocolTests.hello(client, bob.name, "secret").ok == true)
            let raw = try await client.request(
                #"{"id":5,"op":"history","history":{"where":{"entities":["\#(entity)"]},"newestFirst":true,"limit":10}}"#)
            let history = try #require(raw.object["history"] as? [String: Any], "\(raw)")
            #expect(history["isComplete"] == nil, "no compatibility fields")
            let transactions = try #require(history["transactions"] as? [[String: Any]])
            let changeIDs = transactions.flatMap { ($0["changes"] as? [[String: Any]]) ?? [] }.compactMap { $0["id"] as? String }
            #expect(changeIDs.contains(bobRow.uuidString) || changeIDs.contains(bobRow.uuidString.lowercased()))
            #expect(!changeIDs.contains(aliceRow.uuidString) && !changeIDs.contains(aliceRow.uuidString.lowercased()))

            // Deleting history is for admins.
            await #expect(throws: PGModelError.self) { _ = try await store.deleteHistory(HistoryRequest(filter: .none)) }
        }
    }

    @Test("an admin may delete history; the answer is a count")
    func adminDeletesHistory() async throws {
        let admin = try await ServerTestHarness.makeUser("root", admin: true)
        try await ServerTestHarness.withServer { port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(admin, port: port))
            defer { Task { await store.close() } }
            // `none` matches nothing, so other tests' history stays intact.
            #expect(try await store.deleteHistory(HistoryRequest(filter: .none)) == 0)
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await RawProtocolTests.hello(client, admin.name, "secret").ok == true)
            let raw = try await client.request(#"{"id":4,"op":"deleteHistory","history":{"where":{"none":true}}}"#)
            #expect(raw.ok == true, "\(raw)")
            #expect(raw.count == 0)
        }
    }

    @Test("RemoteModelStore.changeSignals yields after another client's save and finishes when the store closes")
    func clientSignals() async throws {
        let alice = try await ServerTestHarness.makeUser("watch")
        let entity = ServerTestHarness.uniqueEntity("Watched")
        try await ServerTestHarness.withRunningServer { server, port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
            let signals = store.changeSignals()
            try await Self.eventually("the stream subscribing") { server.signalForwarderCount == 1 }

            _ = try await Self.save(entity, as: alice, port: port)   // from another client of hers
            let signal = try await Self.firstSignal(signals) { $0.kind == .committed && ($0.entities.isEmpty || $0.entities.contains(entity)) }
            #expect(signal.kind == .committed)

            await store.close()
            #expect(try await Self.finishes(signals, within: .seconds(10)), "the stream finishes when the store closes")
            try await Self.eventually("the server forgetting the subscription") { server.signalForwarderCount == 0 }
        }
    }

    @Test("a ring through the service carries the history its user may see, exactly what a read from its start returns")
    func ringCarriesVisibleHistory() async throws {
        let alice = try await ServerTestHarness.makeUser("carry")
        let bob = try await ServerTestHarness.makeUser("carry")
        let entity = ServerTestHarness.uniqueEntity("Carried")
        try await ServerTestHarness.withRunningServer { server, port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
            let signals = store.changeSignals()
            try await Self.eventually("the stream subscribing") { server.signalForwarderCount == 1 }

            _ = try await Self.save(entity, as: bob, port: port)     // not hers: never in her ring
            let id = try await Self.save(entity, as: alice, port: port)
            let signal = try await Self.firstSignal(signals) { signal in
                signal.history?.transactions.contains { $0.changes.contains { $0.id == id } } == true
            }
            let history = try #require(signal.history)
            let read = try await store.fetchHistory(HistoryRequest(filter: .token(.greater, history.after)))
            #expect(history.transactions.map(\.token) == read.transactions.prefix(history.transactions.count).map(\.token))
            #expect(history.transactions == Array(read.transactions.prefix(history.transactions.count)))
            #expect(history.transactions.allSatisfy { $0.userName == alice.name }, "only her own saves are visible to her")
            await store.close()
        }
    }

    @Test("a stream that is dropped unsubscribes on the server")
    func droppedStreamUnsubscribes() async throws {
        let alice = try await ServerTestHarness.makeUser("drop")
        try await ServerTestHarness.withRunningServer { server, port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
            defer { Task { await store.close() } }
            do {
                let signals = store.changeSignals()
                try await Self.eventually("the stream subscribing") { server.signalForwarderCount == 1 }
                _ = signals
            }
            // The stream is gone (no references): its subscription ends on the server.
            try await Self.eventually("the server forgetting the subscription") { server.signalForwarderCount == 0 }
            try await store.ping()
        }
    }

    @Test("after the server restarts, the stream reconnects by itself and yields reconnected")
    func clientReconnects() async throws {
        let alice = try await ServerTestHarness.makeUser("recon")
        let (store, signals, port) = try await ServerTestHarness.withRunningServer { server, port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(alice, port: port))
            let signals = store.changeSignals()
            try await Self.eventually("the stream subscribing") { server.signalForwarderCount == 1 }
            // Subscribing asks the reader to catch up first.
            let first = try await Self.firstSignal(signals, timeout: .seconds(20)) { _ in true }
            #expect(first.kind == .reconnected)
            return (store, signals, port)
        }
        try await ServerTestHarness.withRunningServer(port: port) { server, _ in
            // The stream subscribes again by itself, then asks its reader to catch up. (Catch-up rings
            // from before the restart may still be queued; any of them asks for the same thing.)
            try await Self.eventually("the stream subscribing again") { server.signalForwarderCount == 1 }
            let signal = try await Self.firstSignal(signals, timeout: .seconds(20)) { $0.kind == .reconnected }
            #expect(signal.kind == .reconnected)
            await store.close()
        }
    }
}

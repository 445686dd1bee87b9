import Foundation
import NIOCore
import NIOEmbedded
@_spi(PGModelInternals) @testable import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelIO
@_spi(PGModelInternals) import PGModelWire
import Testing


/// The service client's connection logic as a pure state machine, and its channel handler on an
/// `EmbeddedChannel`: no socket, no server.
@Suite("Remote client connection")
struct RemoteClientConnectionTests {
    typealias Machine = RemoteConnectionStateMachine<Int>

    // MARK: State machine

    @Test("the first call opens; calls during the login wait and share its channel")
    func concurrentCallsShareOneOpening() {
        var connection = Machine()
        #expect(connection.requestChannel(waiterID: 1) == .open)
        #expect(connection.requestChannel(waiterID: 2) == .wait)
        #expect(connection.requestChannel(waiterID: 3) == .wait)
        #expect(connection.opened(7) == .resume(waiters: [2, 3], channel: 7))
        #expect(connection.requestChannel(waiterID: 4) == .use(7))
        #expect(connection.state == .connected(7))
    }

    @Test("a failed login fails every waiter with it, and the next call tries again")
    func failedOpeningFailsWaitersAndRetries() {
        var connection = Machine()
        #expect(connection.requestChannel(waiterID: 1) == .open)
        #expect(connection.requestChannel(waiterID: 2) == .wait)
        #expect(connection.openFailed() == [2])
        #expect(connection.state == .idle)
        #expect(connection.requestChannel(waiterID: 3) == .open)
    }

    @Test("a dropped or inactive channel makes the next call reconnect; another channel's close changes nothing")
    func dropsReconnect() {
        var connection = Machine()
        #expect(connection.requestChannel(waiterID: 1) == .open)
        _ = connection.opened(7)
        connection.channelClosed(8)
        #expect(connection.state == .connected(7))
        connection.channelClosed(7)
        #expect(connection.requestChannel(waiterID: 2) == .open)
        _ = connection.opened(9)
        #expect(connection.requestChannel(waiterID: 3) { $0 != 9 } == .open, "an inactive channel is replaced")
    }

    @Test("schemas prepared so far are registered again by every new connection, each once, in order")
    func schemasAreRemembered() {
        var connection = Machine()
        let trips = SchemaDescription(entities: [EntityDescription(name: "Trip", attributes: [])])
        let notes = SchemaDescription(entities: [EntityDescription(name: "Note", attributes: [])])
        connection.prepared(trips)
        connection.prepared(notes)
        connection.prepared(trips)
        #expect(connection.schemas == [trips, notes])
    }

    @Test("close returns the channel to say bye on, fails waiters, and refuses later calls")
    func closing() {
        var connection = Machine()
        #expect(connection.requestChannel(waiterID: 1) == .open)
        #expect(connection.requestChannel(waiterID: 2) == .wait)
        let (channel, waiters) = connection.close()
        #expect(channel == nil)
        #expect(waiters == [2])
        #expect(connection.requestChannel(waiterID: 3) == .closed)
        #expect(connection.opened(7) == .closeAndFail(waiters: [], channel: 7), "a login that finishes after close is undone")

        var connected = Machine()
        _ = connected.requestChannel(waiterID: 1)
        _ = connected.opened(5)
        #expect(connected.close().channel == 5)
    }

    // MARK: Pending requests

    @Test("responses match by id in any order; an untagged one answers the oldest; the rest fail in send order")
    func pendingRequests() {
        var pending = PendingRequests<String>()
        #expect(pending.add(.int(1), "one") == true)
        #expect(pending.add(.int(2), "two") == true)
        #expect(pending.add(.int(3), "three") == true)
        #expect(pending.add(.int(2), "again") == false, "an id in flight is refused")
        #expect(pending.take(.int(2)) == "two")
        #expect(pending.take(.int(2)) == nil, "a late second answer is dropped")
        #expect(pending.takeOldest() == "one")
        #expect(pending.add(.int(4), "four") == true)
        #expect(pending.takeAll() == ["three", "four"])
        #expect(pending.count == 0)
        #expect(pending.takeOldest() == nil)
    }

    // MARK: ResponseRouter on an EmbeddedChannel

    static func makeChannel(events: EventCollector = EventCollector()) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(RemoteModelStore.ResponseRouter(peer: "pgmodel://test@embedded:1", maxLineBytes: Self.maxLineBytes) { events.append($0) })
        return channel
    }

    static func send(_ operation: Request.Operation, id: Int64, on channel: EmbeddedChannel) throws -> EventLoopFuture<Response> {
        let promise = channel.eventLoop.makePromise(of: Response.self)
        let line = try Request(id: .int(id), operation: operation).encodedLine()
        channel.write(RemoteModelStore.PendingRequest(id: .int(id), line: ByteBuffer(bytes: line), promise: promise), promise: nil)
        channel.flush()
        return promise.futureResult
    }

    /// The longest line the router's channel takes.
    static let maxLineBytes = 4096

    /// `text` from the server as one line (an empty line after a `text` that ends its own is skipped).
    static func receive(_ text: String, on channel: EmbeddedChannel) throws {
        try channel.writeInbound(ByteBuffer(string: text + "\n"))
    }

    static func outcome(_ future: EventLoopFuture<Response>) -> Result<Response, any Error>? {
        var result: Result<Response, any Error>?
        future.whenComplete { result = $0 }
        return result
    }

    static func isPending(_ future: EventLoopFuture<Response>) -> Bool {
        if case .none = outcome(future) { return true }
        return false
    }

    @Test("writes each request as one line and completes it with the response of its id, out of order too")
    func routesResponsesById() throws {
        let channel = try Self.makeChannel()
        let first = try Self.send(.ping, id: 1, on: channel)
        let second = try Self.send(.count(FetchRequest(entity: "Trip")), id: 2, on: channel)
        let written = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: written).hasSuffix("\n"))
        #expect(String(buffer: written).contains("\"ping\""))
        try Self.receive(String(decoding: try Response(id: .int(2), .count(5)).encodedLine(), as: UTF8.self), on: channel)
        #expect(Self.isPending(first), "the first is still waiting")
        guard case .success(let response)? = Self.outcome(second), case .success(.count(5)) = response.result else {
            Issue.record("the count response went elsewhere")
            return
        }
        try Self.receive(String(decoding: try Response(id: .int(1), .pong).encodedLine(), as: UTF8.self), on: channel)
        guard case .success(let pong)? = Self.outcome(first), case .success(.pong) = pong.result else {
            Issue.record("the ping response went elsewhere")
            return
        }
        _ = try channel.finish()
    }

    @Test("an error without an id, a too-long line and an unreadable line each fail the oldest request only")
    func untaggedFailuresGoToTheOldest() throws {
        let channel = try Self.makeChannel()
        let first = try Self.send(.ping, id: 1, on: channel)
        let second = try Self.send(.ping, id: 2, on: channel)
        let third = try Self.send(.ping, id: 3, on: channel)
        let untagged = Response(id: nil, error: WireError(PGModelError(.malformedMessage, "bad line")))
        try Self.receive(String(decoding: try untagged.encodedLine(), as: UTF8.self), on: channel)
        guard case .success(let response)? = Self.outcome(first), case .failure(let error) = response.result else {
            Issue.record("the untagged error did not answer the oldest request")
            return
        }
        #expect(error.code == .malformedMessage)
        try channel.writeInbound(ByteBuffer(string: String(repeating: "x", count: Self.maxLineBytes + 1) + "\n"))
        guard case .failure(let tooLong)? = Self.outcome(second) else { Issue.record("no failure"); return }
        #expect((tooLong as? PGModelError)?.code == .lineTooLong)
        try Self.receive("{not json", on: channel)
        guard case .failure? = Self.outcome(third) else { Issue.record("no failure for an unreadable line"); return }
        _ = try channel.finish()
    }

    @Test("event lines go to the event handler and complete no request")
    func eventsAreNotResponses() throws {
        let events = EventCollector()
        let channel = try Self.makeChannel(events: events)
        let waiting = try Self.send(.ping, id: 1, on: channel)
        let event = Event.changes(subscription: .int(9), entities: ["Trip"])
        try Self.receive(String(decoding: try JSONEncoder().encode(event), as: UTF8.self), on: channel)
        #expect(events.all == [event])
        #expect(Self.isPending(waiting))
        _ = try channel.finish()
    }

    @Test("a duplicate id is refused; the end of the connection fails every waiting request with connection_failed")
    func closeFailsEverything() throws {
        let channel = try Self.makeChannel()
        let first = try Self.send(.ping, id: 1, on: channel)
        let duplicate = try Self.send(.ping, id: 1, on: channel)
        guard case .failure(let refused)? = Self.outcome(duplicate) else { Issue.record("duplicate accepted"); return }
        #expect((refused as? PGModelError)?.code == .internalError)
        let second = try Self.send(.ping, id: 2, on: channel)
        channel.pipeline.fireChannelInactive()
        for future in [first, second] {
            guard case .failure(let error)? = Self.outcome(future) else { Issue.record("a request survived the close"); return }
            #expect((error as? PGModelError)?.code == .connectionFailed)
        }
        _ = try? channel.finish()
    }

    @Test("answers split across reads are put together; a last answer without its newline still counts when the connection ends")
    func framesLinesAcrossReads() throws {
        let channel = try Self.makeChannel()
        let first = try Self.send(.ping, id: 1, on: channel)
        let second = try Self.send(.ping, id: 2, on: channel)
        try channel.writeInbound(ByteBuffer(string: #"{"id":1,"ok":"#))
        #expect(Self.isPending(first))
        try channel.writeInbound(ByteBuffer(string: "true,\"pong\":true}\r\n{\"id\":2,\"ok\":true,\"pong\":true}"))
        guard case .success(let answer)? = Self.outcome(first), case .success(.pong) = answer.result else {
            Issue.record("the answer put together from two reads (CRLF) did not complete its request")
            return
        }
        #expect(Self.isPending(second), "no newline yet: more may follow")
        channel.pipeline.fireChannelInactive()
        guard case .success(let last)? = Self.outcome(second), case .success(.pong) = last.result else {
            Issue.record("the last answer, without its newline, was lost at the end of the connection")
            return
        }
        _ = try? channel.finish()
    }
}

/// Events the router handed on, in order.
final class EventCollector: @unchecked Sendable {
    // @unchecked: an EmbeddedChannel runs everything on the test's thread; the lock is for form.
    private let lock = NSLock()
    private var events: [Event] = []
    func append(_ event: Event) { lock.withLock { events.append(event) } }
    var all: [Event] { lock.withLock { events } }
}

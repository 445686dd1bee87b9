import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// A deliberately dumb protocol client for tests: raw bytes out, lines in, no PGModel code involved
/// (it splits lines itself), so what the tests check is what any client on the wire would see.
final class RawProtocolClient: Sendable {
    struct Timeout: Error, CustomStringConvertible {
        var description: String
    }

    let channel: any Channel
    private let inbox: LineInbox

    private init(channel: any Channel, inbox: LineInbox) {
        self.channel = channel
        self.inbox = inbox
    }

    /// Connects to 127.0.0.1:`port`, from `source` (a loopback address such as 127.0.0.2) when given.
    static func connect(port: Int, from source: String? = nil) async throws -> RawProtocolClient {
        let inbox = LineInbox()
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel = try await bootstrap
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(LineCollector(inbox: inbox))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        return RawProtocolClient(channel: channel, inbox: inbox)
    }

    /// Sends bytes exactly as given.
    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text))
    }

    /// Sends `json` and a newline.
    func sendLine(_ json: String) async throws {
        try await send(json + "\n")
    }

    /// The next line from the server (without its newline), waiting at most `timeout`.
    func readLine(timeout: TimeAmount = .seconds(15)) async throws -> String {
        guard let line = try await inbox.next(timeout: timeout, on: channel.eventLoop) else {
            throw Timeout(description: "the server closed the connection instead of answering")
        }
        return line
    }

    /// Sends one request line and parses the response line.
    func request(_ json: String) async throws -> RawResponse {
        try await sendLine(json)
        do {
            return try RawResponse(try await readLine())
        } catch let timeout as RawProtocolClient.Timeout {
            // Name the request that got no answer: a failure then says which one stalled.
            throw RawProtocolClient.Timeout(description: "\(timeout.description), after sending \(json.prefix(120))")
        }
    }

    /// Waits until the server closes the connection; fails if a line arrives instead.
    func expectClosed(timeout: TimeAmount = .seconds(15)) async throws {
        if let line = try await inbox.next(timeout: timeout, on: channel.eventLoop) {
            Issue.record("expected the connection to close, got a line: \(line)")
        }
    }

    /// Half-closes: the server sees end of input but may still answer.
    func finishSending() async throws {
        try await channel.close(mode: .output)
    }

    func close() async {
        try? await channel.close()
    }
}

/// One parsed response line.
struct RawResponse: CustomStringConvertible {
    let text: String
    let object: [String: Any]

    init(_ text: String) throws {
        self.text = text
        object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    var ok: Bool? { object["ok"] as? Bool }
    var idNumber: Int? { object["id"] as? Int }
    var idIsNull: Bool { object["id"] is NSNull }
    var error: [String: Any]? { object["error"] as? [String: Any] }
    /// The error object without `requestID`: that names the request (a per-connection random prefix and
    /// a count), not anything about the data, so two answers that must not tell cases apart are compared
    /// without it.
    var errorWithoutRequestID: NSDictionary? {
        guard var error else { return nil }
        error.removeValue(forKey: "requestID")
        return NSDictionary(dictionary: error)
    }
    var code: String? { error?["code"] as? String }
    var message: String? { error?["message"] as? String }
    var field: String? { error?["field"] as? String }
    var rows: [[String: Any]]? { object["rows"] as? [[String: Any]] }
    var count: Int? { object["count"] as? Int }
    var description: String { text }

    /// The `values` of each row, by the row's `name` value.
    var valuesByName: [String: [String: Any]] {
        var result: [String: [String: Any]] = [:]
        for row in rows ?? [] {
            if let values = row["values"] as? [String: Any], let name = values["name"] as? String { result[name] = values }
        }
        return result
    }
}

/// Received lines and the readers waiting for them; fed on the event loop, read from tests.
final class LineInbox: Sendable {
    private struct State {
        var lines: [String] = []
        var isClosed = false
        var waiters: [(id: Int, continuation: CheckedContinuation<String?, any Error>)] = []
        var nextWaiter = 0
    }

    private let state = NIOLockedValueBox(State())

    func deliver(_ line: String) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<String?, any Error>? in
            if state.waiters.isEmpty {
                state.lines.append(line)
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        waiter?.resume(returning: line)
    }

    func close() {
        let waiters = state.withLockedValue { state in
            state.isClosed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// The next line, `nil` at end of stream, or a ``RawProtocolClient/Timeout``.
    func next(timeout: TimeAmount, on eventLoop: any EventLoop) async throws -> String? {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLockedValue { state -> Result<String?, any Error>? in
                if !state.lines.isEmpty { return .success(state.lines.removeFirst()) }
                if state.isClosed { return .success(nil) }
                let id = state.nextWaiter
                state.nextWaiter += 1
                state.waiters.append((id, continuation))
                eventLoop.scheduleTask(in: timeout) { [self] in self.expire(id, after: timeout) }
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    private func expire(_ id: Int, after timeout: TimeAmount) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<String?, any Error>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        waiter?.resume(throwing: RawProtocolClient.Timeout(
            description: "no line from the server within \(timeout.nanoseconds / 1_000_000) ms"))
    }
}

/// Splits inbound bytes at "\n" and hands each line to the inbox.
final class LineCollector: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var pending: [UInt8] = []
    private let inbox: LineInbox

    init(inbox: LineInbox) {
        self.inbox = inbox
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        for byte in buffer.readableBytesView {
            if byte == UInt8(ascii: "\n") {
                inbox.deliver(String(decoding: pending, as: UTF8.self))
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(byte)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event { inbox.close() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.close()
        context.fireChannelInactive()
    }
}

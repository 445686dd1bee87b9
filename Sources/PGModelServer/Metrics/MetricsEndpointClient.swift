import NIOCore
import NIOHTTP1
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO

/// A minimal HTTP/1.1 GET for the metrics endpoint: what `pgmodel status` and the tests read
/// `/health/ready` and `/metrics` with. One request per connection, a bounded answer and a deadline.
///
/// ```swift
/// let answer = try await MetricsEndpointClient(host: "127.0.0.1", port: 9090).get("/health/ready")
/// print(answer.status, String(decoding: answer.body, as: UTF8.self))
/// ```
package struct MetricsEndpointClient: Sendable {
    /// One answer: its status code and body.
    package struct Answer: Sendable {
        package var status: Int
        package var body: [UInt8]
        package var text: String { String(decoding: body, as: UTF8.self) }
    }

    package let host: String
    package let port: Int
    package var timeout: Duration = .seconds(5)
    /// The largest body read; a longer answer fails.
    package var maxBodyBytes = 32 << 20

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// GETs `path` and returns the answer, whatever its status. Throws `connection_failed` when the
    /// endpoint cannot be reached, `timeout` past ``timeout``.
    package func get(_ path: String) async throws -> Answer {
        let (host, port, maxBodyBytes) = (host, port, maxBodyBytes)
        return try await Deadline(timeout, operation: "GET \(path)").run {
            let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
            do {
                channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(host: host, port: port) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHTTPClientHandlers()
                            return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                        }
                    }
            } catch {
                throw PGModelError(.connectionFailed, "cannot reach the metrics endpoint at \(host):\(port): \(ConnectionFailureText.describe(error))")
            }
            return try await channel.executeThenClose { inbound, outbound in
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: "\(host):\(port)")
                headers.add(name: "Connection", value: "close")
                try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)))
                try await outbound.write(.end(nil))
                var status = 0
                var body: [UInt8] = []
                for try await part in inbound {
                    switch part {
                    case .head(let head):
                        status = Int(head.status.code)
                    case .body(let buffer):
                        guard body.count + buffer.readableBytes <= maxBodyBytes else {
                            throw PGModelError(.resultTooLarge, "the metrics endpoint's answer is over \(maxBodyBytes) bytes")
                        }
                        body.append(contentsOf: buffer.readableBytesView)
                    case .end:
                        return Answer(status: status, body: body)
                    }
                }
                throw PGModelError(.connectionFailed, "the metrics endpoint closed the connection before answering")
            }
        }
    }
}

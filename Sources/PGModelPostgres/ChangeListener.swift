import Logging
import NIOConcurrencyHelpers
import NIOCore
import PGModelCore
import PostgresNIO

/// TEMP stub: the engine branch (history-engine) provides the real LISTEN-based listener. This one
/// never rings; its streams stay open until ``close()``.
public final class ChangeListener: Sendable {
    private let continuations = NIOLockedValueBox<[AsyncStream<ChangeSignal>.Continuation]?>([])

    public init(configuration: PostgresConnection.Configuration, schemaName: String, eventLoop: any EventLoop, logger: Logger) {}

    public func signals() -> AsyncStream<ChangeSignal> {
        let (stream, continuation) = AsyncStream<ChangeSignal>.makeStream()
        let open = continuations.withLockedValue { list -> Bool in
            guard list != nil else { return false }
            list?.append(continuation)
            return true
        }
        if !open { continuation.finish() }
        return stream
    }

    public func close() async {
        let list = continuations.withLockedValue { list in
            defer { list = nil }
            return list ?? []
        }
        for continuation in list { continuation.finish() }
    }
}

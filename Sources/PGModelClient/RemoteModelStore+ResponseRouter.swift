import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelWire

extension RemoteModelStore {
    /// A request the server certainly did not run: it was never written, or the server announced it
    /// would run nothing more from the connection. Safe to send again on a new connection.
    struct RequestNotRun: Error {
        var error: PGModelError
    }

    /// A request on its way out, with the promise its response completes.
    struct PendingRequest: Sendable {
        var id: RequestID
        var line: ByteBuffer
        var promise: EventLoopPromise<Response>
    }

    /// Splits the server's bytes into lines (``LineFramer``), matches response lines to waiting requests by
    /// id (many may be in flight: pipelining), and fails every waiting request with `connection_failed`
    /// when the connection ends. Lives on the channel's event loop. Framing here rather than in a
    /// `ByteToMessageHandler` before it spares every answer that handler's pass.
    final class ResponseRouter: ChannelDuplexHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundIn = PendingRequest
        typealias OutboundOut = ByteBuffer

        private var pending = PendingRequests<EventLoopPromise<Response>>()
        private var framer: LineFramer
        private let peer: String
        /// Receives event lines (subscriptions); called on the event loop, so it must not block.
        private let onEvent: @Sendable (Event) -> Void

        init(peer: String, maxLineBytes: Int, onEvent: @escaping @Sendable (Event) -> Void = { _ in }) {
            self.peer = peer
            self.framer = LineFramer(maxLineBytes: maxLineBytes)
            self.onEvent = onEvent
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let request = unwrapOutboundIn(data)
            guard pending.add(request.id, request.promise) else {
                let error = PGModelError(.internalError, "request id \(request.id) is already in flight")
                request.promise.fail(error)
                promise?.fail(error)
                return
            }
            context.write(wrapOutboundOut(request.line), promise: promise)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            framer.append(unwrapInboundIn(data))
            while let frame = framer.next() { receive(frame, context: context) }
        }

        private func receive(_ frame: LineFramer.Frame, context: ChannelHandlerContext) {
            switch frame {
            case .lineTooLong(let limit):
                failOldest(PGModelError(
                    .lineTooLong, "a response from \(peer) is longer than this client's limit of \(limit) bytes"))
            case .line(let line):
                guard line.readableBytes > 0 else { return }
                do {
                    switch try ServerMessage.decode(line: line) {
                    case .event(let event):
                        onEvent(event)
                    case .response(let response):
                        if let id = response.id {
                            pending.take(id)?.succeed(response)
                        } else if RemoteModelStore.isClosingNotice(response), case .failure(let notice) = response.result {
                            // The server runs nothing more from this connection: whatever waits was not run.
                            // Closed before the waiting calls resume, so a call retrying at once on
                            // another thread finds this channel inactive and opens a new one.
                            let error = RequestNotRun(error: notice.modelError)
                            let waiting = pending.takeAll()
                            context.close(promise: nil)
                            for promise in waiting { promise.fail(error) }
                        } else {
                            pending.takeOldest()?.succeed(response)
                        }
                    }
                } catch {
                    failOldest(error)
                }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            // A last line without its "\n" still counts, as ByteToMessageHandler's decodeLast made it.
            if let last = framer.finish() { receive(last, context: context) }
            failAll(PGModelError(.connectionFailed, "the connection to \(peer) was lost"))
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            failAll(PGModelError(.connectionFailed, "the connection to \(peer) failed: \(type(of: error))"))
            context.close(promise: nil)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            failAll(PGModelError(.connectionFailed, "the connection to \(peer) was closed"))
        }

        private func failOldest(_ error: any Error) {
            pending.takeOldest()?.fail(error)
        }

        private func failAll(_ error: any Error) {
            // In send order, as the responses would have come.
            for promise in pending.takeAll() { promise.fail(error) }
        }
    }
}

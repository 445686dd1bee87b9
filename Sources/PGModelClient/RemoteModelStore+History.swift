import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelWire

@_spi(PGModelInternals) extension RemoteModelStore {
    /// The caller's history transactions (`history`); the server shows a non-admin only the changes
    /// of their own rows.
    ///
    /// ```swift
    /// let page = try await store.fetchHistory(HistoryRequest(filter: .token(.greater, lastToken)))
    /// lastToken = page.transactions.last?.token ?? lastToken
    /// ```
    ///
    /// The server answers at most a page of transactions (and of bytes) per `history`; a request for more
    /// (or without a `limit`) is read here page by page, each page resuming after the last transaction of
    /// the one before in the request's order, and a page refused as too large is asked for again at half
    /// the size.
    public func fetchHistory(_ request: HistoryRequest) async throws -> HistoryPage {
        var pageSize = Self.historyPageSize
        var transactions: [HistoryRecord] = []
        var last: HistoryRecord?
        while true {
            let wanted = request.limit.map { $0 - transactions.count } ?? .max
            guard wanted > 0 else { break }
            var page = request
            page.limit = min(pageSize, wanted)
            if let last { page.filter = .and([request.filter, request.condition(after: last)]) }
            let answer: HistoryPage
            do {
                answer = try await historyPage(page)
            } catch let error as PGModelError where error.code == .resultTooLarge && pageSize > 1 {
                pageSize = max(1, pageSize / 2)
                continue
            }
            transactions += answer.transactions
            guard let newest = answer.transactions.last, answer.transactions.count == page.limit else { break }
            last = newest
        }
        return HistoryPage(transactions: transactions)
    }

    /// The most transactions ``fetchHistory(_:)`` asks the server for at once: well under the server's
    /// default cap (``LineServerConfiguration/maxHistoryTransactions`` is 10,000).
    static let historyPageSize = 1_000

    private func historyPage(_ request: HistoryRequest) async throws -> HistoryPage {
        guard case .history(let page) = try await call(.history(request)) else { throw Self.unexpectedResult(.history) }
        return page
    }

    /// Deletes matching history transactions (`deleteHistory`); the server allows it to admins only
    /// (`forbidden` otherwise).
    ///
    /// ```swift
    /// let deleted = try await store.deleteHistory(HistoryRequest(filter: .token(.lessOrEqual, oldToken)))
    /// ```
    public func deleteHistory(_ request: HistoryRequest) async throws -> Int {
        guard case .count(let count) = try await call(.deleteHistory(request)) else {
            throw Self.unexpectedResult(.deleteHistory)
        }
        return count
    }

    public func sharing(of record: RowReference) async throws -> RecordSharing {
        guard case .shares(let sharing) = try await call(.shares(record)) else { throw Self.unexpectedResult(.shares) }
        return sharing
    }

    /// A new stream of doorbells for saves in the server's schema, by any client. Each stream holds a
    /// `subscribe` of its own on the store's connection. When the connection drops, the stream
    /// reconnects (with backoff, even if nothing else calls the store), subscribes again and yields
    /// ``ChangeSignal/Kind/reconnected``: read history from your token then. The stream finishes when
    /// the store closes; ending its iteration unsubscribes.
    ///
    /// ```swift
    /// for await signal in store.changeSignals() {
    ///     let page = try await store.fetchHistory(HistoryRequest(filter: .token(.greater, token)))
    ///     token = page.transactions.last?.token ?? token
    /// }
    /// ```
    public func changeSignals() -> AsyncStream<ChangeSignal> {
        let (stream, continuation) = AsyncStream<ChangeSignal>.makeStream()
        guard let key = signalHub.add(continuation) else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.endSubscription(key) }
        let task = Task { await self.keepSubscribed(key) }
        signalHub.attach(task, to: key)
        return stream
    }

    /// Subscribes stream `key`, waits for its connection to drop, and subscribes again, until the
    /// stream or the store ends.
    private func keepSubscribed(_ key: Int) async {
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled, signalHub.isOpen(key) {
            do {
                let channel = try await connectedChannel()
                let id = makeRequestID()
                let ending = SignalHub.Ending()
                guard signalHub.route(SignalHub.Route(subscription: id, channel: channel, ending: ending), to: key) else { break }
                channel.closeFuture.whenComplete { _ in ending.fire() }
                do {
                    let operation = Request.Operation.subscribe(entities: nil)
                    _ = try Self.result(of: try await response(to: operation, id: id, on: channel), for: operation)
                } catch {
                    signalHub.unroute(id, from: key)
                    throw error
                }
                // Anything may have been saved while this stream had no subscription — before the first
                // one too: a reader that took its token before subscribing must catch up now.
                signalHub.yield(ChangeSignal(.reconnected), to: key)
                delay = .milliseconds(100)
                await ending.wait()
                signalHub.unroute(id, from: key)
            } catch {
                guard !Task.isCancelled, signalHub.isOpen(key) else { break }
                logger.debug("subscription failed; retrying", metadata: ["error": "\(error)", "delay": "\(delay)"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
        _ = signalHub.remove(key)
    }

    /// Stream `key` ended (its reader went away or the store closed): stop its task and, if its
    /// subscription is still live, tell the server. Best effort: the answer is not awaited.
    private func endSubscription(_ key: Int) {
        guard let route = signalHub.remove(key), route.channel.isActive else { return }
        _ = roundTrip(.unsubscribe(subscription: route.subscription), on: route.channel)
    }
}

import PGModelCore

extension RemoteModelStore {
    public func fetchHistory(_ request: HistoryRequest) async throws -> HistoryPage {
        throw PGModelError(.internalError, "history is not implemented by this store yet")
    }

    public func deleteHistory(_ request: HistoryRequest) async throws -> Int {
        throw PGModelError(.internalError, "history is not implemented by this store yet")
    }

    public func changeSignals() -> AsyncStream<ChangeSignal> {
        AsyncStream { $0.finish() }
    }
}

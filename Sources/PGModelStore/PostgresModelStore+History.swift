import PGModelCore
import PGModelPostgres

extension PostgresModelStore {
    public func fetchHistory(_ request: HistoryRequest) async throws -> HistoryPage {
        try await withConnection(operation: "history fetch") { try await self.engine.fetchHistory(request, scope: .unrestricted, on: $0) }
    }

    public func deleteHistory(_ request: HistoryRequest) async throws -> Int {
        try await withConnection(operation: "history delete") { try await self.engine.deleteHistory(request, scope: .unrestricted, on: $0) }
    }

    public func changeSignals() -> AsyncStream<ChangeSignal> {
        changeListener.signals()
    }
}

import PGModelCore
import PostgresNIO

// TEMP stub: the engine branch (history-engine) provides the real implementation.
extension PostgresStoreEngine {
    public func fetchHistory(_ request: HistoryRequest, scope: AccessScope, on connection: PostgresConnection) async throws -> HistoryPage {
        throw PGModelError(.internalError, "history is not implemented by this engine yet")
    }

    public func deleteHistory(_ request: HistoryRequest, scope: AccessScope, on connection: PostgresConnection) async throws -> Int {
        throw PGModelError(.internalError, "history is not implemented by this engine yet")
    }
}

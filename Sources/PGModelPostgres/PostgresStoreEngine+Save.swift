import Foundation
import PGModelCore
import PGModelSQL
import PostgresNIO

extension PostgresStoreEngine {
    /// Applies `request` in one transaction: deletes, then updates, then inserts — so a model renamed
    /// away from a unique value frees it for an insert in the same save. An insert that meets a
    /// uniqueness constraint updates the existing row (SwiftData's upsert) and is reported in
    /// ``SaveResult/remappedIdentifiers``. Any failure rolls back everything.
    public func save(_ request: SaveRequest, in schema: SchemaDescription, scope: AccessScope, on connection: PostgresConnection) async throws -> SaveResult {
        guard !request.isEmpty else { return SaveResult() }
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let owner = scope.ownerFilter
        return try await transaction(on: connection) {
            var result = SaveResult()
            for reference in request.deletes {
                let deleted = try await query(try renderer.delete(reference, ownerID: owner), on: connection, model: reference.entity)
                // Deleting a row that is already gone is not an error (another context won the race);
                // deleting someone else's row is.
                if deleted.isEmpty, owner != nil, try await exists(reference, renderer, connection) {
                    throw PGModelError(.forbidden, "this \(reference.entity) belongs to another user", model: reference.entity)
                }
            }
            for row in request.updates {
                let updated = try await query(try renderer.update(row, ownerID: owner), on: connection, model: row.entity)
                if updated.isEmpty {
                    if owner != nil, try await exists(RowReference(entity: row.entity, id: row.id), renderer, connection) {
                        throw PGModelError(.forbidden, "this \(row.entity) belongs to another user", model: row.entity)
                    }
                    throw PGModelError(.notFound, "an updated \(row.entity) no longer exists", model: row.entity)
                }
            }
            for row in request.inserts {
                let inserted = try await query(try renderer.insert(row, ownerID: scope.userID), on: connection, model: row.entity)
                if !inserted.isEmpty { continue }
                guard let upsert = try renderer.upsertUpdate(row, ownerID: owner) else {
                    throw PGModelError(.uniqueViolation, "an inserted \(row.entity) collides with an existing row's id", model: row.entity)
                }
                let merged = try await query(upsert, on: connection, model: row.entity)
                guard let first = merged.first else {
                    throw PGModelError(.uniqueViolation,
                        "an inserted \(row.entity) has the unique values of a row this user cannot change", model: row.entity)
                }
                let existing = try first.decode(UUID.self)
                if existing != row.id { result.remappedIdentifiers[row.id] = existing }
            }
            return result
        }
    }

    private func exists(_ reference: RowReference, _ renderer: SQLRenderer, _ connection: PostgresConnection) async throws -> Bool {
        !(try await query(try renderer.exists(reference), on: connection, model: reference.entity)).isEmpty
    }
}
